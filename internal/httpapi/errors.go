package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"govllm/internal/apierr"
	"govllm/internal/chattemplate"
	"govllm/internal/llm"
	"govllm/internal/openai"
	"govllm/internal/output"
)

// statusClientClosed is logged and counted when the client went away before
// the reply (nginx's 499); the client never sees it.
const statusClientClosed = 499

// classify maps an error to its HTTP status and the envelope's param. It is
// the one place where errors become statuses.
func classify(err error) (status int, param string) {
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return ae.HTTPStatus(), ae.Param
	case errors.Is(err, output.ErrDuplicateID):
		return http.StatusBadRequest, "request_id" // a client-chosen id already in flight
	case errors.Is(err, chattemplate.ErrTemplate):
		return http.StatusBadRequest, "messages"
	case errors.Is(err, llm.ErrEngineDead), errors.Is(err, llm.ErrClosed):
		return http.StatusServiceUnavailable, ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return statusClientClosed, ""
	}
	return http.StatusInternalServerError, ""
}

// writeErr answers err as an envelope with its mapped status. Internal
// errors are logged and their text is not shown to the client.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	status, param := classify(err)
	msg := err.Error()
	switch {
	case status == http.StatusRequestEntityTooLarge:
		msg = "request body too large (limit " + itoa(s.cfg.MaxBodyBytes) + " bytes)"
	case status >= 500:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		if status == http.StatusInternalServerError {
			msg = "internal server error"
		}
	}
	writeError(w, status, param, msg)
}

// writeError writes the envelope.
func writeError(w http.ResponseWriter, status int, param, msg string) {
	writeJSON(w, status, openai.NewError(status, param, msg))
}

// writeJSON writes v as the JSON reply with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = marshal(openai.NewError(status, "", "encoding the response failed"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "", "route "+r.Method+" "+r.URL.Path+" not found")
}

func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "", "method "+r.Method+" not allowed on "+r.URL.Path+" (allowed: "+allow+")")
	})
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// marshal encodes v without HTML escaping ("<s>" stays "<s>", as in vLLM).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
