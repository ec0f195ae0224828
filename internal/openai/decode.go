package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"govllm/internal/apierr"
	"io"
	"net/http"
	"strings"
)

// Decode reads one JSON object from r into v. Malformed JSON, a value of the
// wrong type, an empty body or trailing data give a *apierr.Error (Param is
// the JSON path of the field for type errors). A body that cannot be read
// (broken chunked encoding, a Content-Length longer than the body, the
// body-size limit) gives a *BodyError wrapping the read error, so the
// caller can still branch on it (*http.MaxBytesError) with errors.As.
func Decode(r io.Reader, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads the body and checks it holds a JSON object.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, bodyError(err)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, &apierr.Error{Msg: "request body is empty; expected a JSON object"}
	}
	if body[0] != '{' {
		return nil, &apierr.Error{Msg: "request body must be a JSON object"}
	}
	return body, nil
}

// decodeBody decodes the one JSON object body into v.
func decodeBody(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return &apierr.Error{Msg: "malformed JSON: unexpected data after the top-level object"}
	}
	return nil
}

// bodyError is a body that could not be read: the client's fault, 400, or
// 413 when it is the body-size limit.
func bodyError(err error) error {
	status := http.StatusBadRequest
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		status = http.StatusRequestEntityTooLarge
	}
	return &apierr.Error{Status: status, Msg: "reading the request body: " + err.Error(), Err: err}
}

func decodeError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var pe *apierr.Error
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &se):
		return &apierr.Error{Msg: fmt.Sprintf("malformed JSON at offset %d: %v", se.Offset, se)}
	case errors.As(err, &te):
		field := topField(te.Field)
		return &apierr.Error{Param: field, Msg: fmt.Sprintf("expected %s, got JSON %s", goTypeName(te.Type.String()), te.Value)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &apierr.Error{Msg: "malformed JSON: unexpected end of body"}
	}
	return &apierr.Error{Msg: "malformed JSON: " + err.Error()}
}

func goTypeName(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map"), strings.Contains(t, "."):
		return "an object"
	}
	return t
}

// topField turns encoding/json's field path ("SamplingFields.temperature",
// "messages.content") into the top-level JSON field name; Go names of
// embedded structs start with an upper-case letter and are dropped.
func topField(path string) string {
	for _, seg := range strings.Split(path, ".") {
		if seg != "" && !(seg[0] >= 'A' && seg[0] <= 'Z') {
			return seg
		}
	}
	return ""
}
