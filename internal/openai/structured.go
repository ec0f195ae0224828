package openai

import (
	"bytes"
	"encoding/json"

	"govllm/internal/apierr"
	"govllm/internal/sampling"
)

// StructuredFields are the structured-output fields completions and chat
// share: OpenAI's response_format, vLLM's structured_outputs and its older
// guided_* fields. At most one may ask for a constraint.
type StructuredFields struct {
	ResponseFormat    *ResponseFormat    `json:"response_format,omitempty"`
	StructuredOutputs *StructuredOutputs `json:"structured_outputs,omitempty"`
	GuidedJSON        json.RawMessage    `json:"guided_json,omitempty"`
	GuidedRegex       *string            `json:"guided_regex,omitempty"`
	GuidedChoice      []string           `json:"guided_choice,omitempty"`
	GuidedGrammar     *string            `json:"guided_grammar,omitempty"`
}

// ResponseFormat is "response_format": {"type": "text"}, {"type":
// "json_object"} or {"type": "json_schema", "json_schema": {"name",
// "schema", "strict", "description"}}.
type ResponseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *JSONSchemaFormat `json:"json_schema,omitempty"`
}

// JSONSchemaFormat is response_format's "json_schema" object.
type JSONSchemaFormat struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict,omitempty"`
}

// StructuredOutputs is vLLM's "structured_outputs" object: exactly one of
// json, regex, choice, grammar or json_object, and the option
// disable_any_whitespace (no whitespace between JSON tokens), which may
// also stand alone to apply to response_format's or a guided_* field's
// constraint (vLLM merges response_format into structured_outputs).
type StructuredOutputs struct {
	JSON                 json.RawMessage `json:"json,omitempty"`
	Regex                *string         `json:"regex,omitempty"`
	Choice               []string        `json:"choice,omitempty"`
	Grammar              *string         `json:"grammar,omitempty"`
	JSONObject           *bool           `json:"json_object,omitempty"`
	DisableAnyWhitespace bool            `json:"disable_any_whitespace,omitempty"`
}

// structured returns the one constraint the fields ask for (nil for none),
// or a 400 naming the field when they are malformed or ask for several.
func (f *StructuredFields) structured() (*sampling.Structured, error) {
	var found []*sampling.Structured
	add := func(s *sampling.Structured, err error) error {
		if s != nil {
			found = append(found, s)
		}
		return err
	}
	if err := add(f.ResponseFormat.structured()); err != nil {
		return nil, err
	}
	if err := add(f.StructuredOutputs.structured()); err != nil {
		return nil, err
	}
	if err := add(guided(f)); err != nil {
		return nil, err
	}
	if len(found) > 1 {
		return nil, apierr.New(found[1].Param, "only one structured-output constraint may be given (%s and %s both are)", found[0].Param, found[1].Param)
	}
	compact := f.StructuredOutputs != nil && f.StructuredOutputs.DisableAnyWhitespace
	if len(found) == 0 {
		if compact {
			return nil, apierr.New("structured_outputs", "disable_any_whitespace needs a constraint (structured_outputs' json or json_object, response_format, or guided_json)")
		}
		return nil, nil
	}
	found[0].Compact = compact
	return found[0], nil
}

func (r *ResponseFormat) structured() (*sampling.Structured, error) {
	if r == nil {
		return nil, nil
	}
	const p = "response_format"
	switch r.Type {
	case "text":
		return nil, nil
	case "json_object":
		return &sampling.Structured{JSONObject: true, Param: p}, nil
	case "json_schema":
		if r.JSONSchema == nil || !isJSONObject(r.JSONSchema.Schema) {
			return nil, apierr.New(p, "json_schema.schema must be a JSON Schema object")
		}
		return &sampling.Structured{JSONSchema: string(r.JSONSchema.Schema), Param: p}, nil
	}
	return nil, apierr.New(p, "type must be text, json_object or json_schema, got %q", r.Type)
}

func (s *StructuredOutputs) structured() (*sampling.Structured, error) {
	if s == nil {
		return nil, nil
	}
	const p = "structured_outputs"
	var out []sampling.Structured
	if len(s.JSON) > 0 && !bytes.Equal(s.JSON, []byte("null")) {
		schema, err := schemaText(p, s.JSON)
		if err != nil {
			return nil, err
		}
		out = append(out, sampling.Structured{JSONSchema: schema, Param: p})
	}
	if s.Regex != nil {
		out = append(out, sampling.Structured{Regex: *s.Regex, Param: p})
	}
	if s.Choice != nil {
		out = append(out, sampling.Structured{Choice: s.Choice, Param: p})
	}
	if s.Grammar != nil {
		out = append(out, sampling.Structured{Grammar: *s.Grammar, Param: p})
	}
	if s.JSONObject != nil && *s.JSONObject {
		out = append(out, sampling.Structured{JSONObject: true, Param: p})
	}
	if len(out) == 0 && s.DisableAnyWhitespace {
		return nil, nil // an option for another field's constraint
	}
	if len(out) != 1 {
		return nil, apierr.New(p, "give exactly one of json, regex, choice, grammar or json_object (got %d)", len(out))
	}
	return &out[0], nil
}

// guided reads vLLM's older guided_* fields.
func guided(f *StructuredFields) (*sampling.Structured, error) {
	switch {
	case len(f.GuidedJSON) > 0 && !bytes.Equal(f.GuidedJSON, []byte("null")):
		schema, err := schemaText("guided_json", f.GuidedJSON)
		return &sampling.Structured{JSONSchema: schema, Param: "guided_json"}, err
	case f.GuidedRegex != nil:
		return &sampling.Structured{Regex: *f.GuidedRegex, Param: "guided_regex"}, nil
	case f.GuidedChoice != nil:
		return &sampling.Structured{Choice: f.GuidedChoice, Param: "guided_choice"}, nil
	case f.GuidedGrammar != nil:
		return &sampling.Structured{Grammar: *f.GuidedGrammar, Param: "guided_grammar"}, nil
	}
	return nil, nil
}

// schemaText accepts a schema given as a JSON object or as a string that
// holds one (vLLM takes both).
func schemaText(param string, raw json.RawMessage) (string, error) {
	if isJSONObject(raw) {
		return string(raw), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && isJSONObject([]byte(s)) {
		return s, nil
	}
	return "", apierr.New(param, "the JSON schema must be a JSON object (or a string holding one)")
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
