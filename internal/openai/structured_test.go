package openai

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"govllm/internal/apierr"
	"govllm/internal/sampling"
)

// TestDisableAnyWhitespace: vLLM's structured_outputs.disable_any_whitespace
// applies to the request's one JSON constraint, whether structured_outputs
// holds it or response_format / guided_json does (vLLM merges
// response_format into structured_outputs); alone it is a 400 naming
// structured_outputs, never ignored.
func TestDisableAnyWhitespace(t *testing.T) {
	tests := []struct {
		name, body string
		want       *sampling.Structured
		errParam   string
	}{
		{"with json", `{"structured_outputs":{"json":{"type":"object"},"disable_any_whitespace":true}}`,
			&sampling.Structured{JSONSchema: `{"type":"object"}`, Compact: true, Param: "structured_outputs"}, ""},
		{"with response_format", `{"structured_outputs":{"disable_any_whitespace":true},"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"integer"}}}}`,
			&sampling.Structured{JSONSchema: `{"type":"integer"}`, Compact: true, Param: "response_format"}, ""},
		{"with guided_json", `{"structured_outputs":{"disable_any_whitespace":true},"guided_json":{"type":"array"}}`,
			&sampling.Structured{JSONSchema: `{"type":"array"}`, Compact: true, Param: "guided_json"}, ""},
		{"off by default", `{"response_format":{"type":"json_object"}}`,
			&sampling.Structured{JSONObject: true, Param: "response_format"}, ""},
		{"alone", `{"structured_outputs":{"disable_any_whitespace":true}}`, nil, "structured_outputs"},
		{"empty structured_outputs", `{"structured_outputs":{}}`, nil, "structured_outputs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f StructuredFields
			if err := json.Unmarshal([]byte(tt.body), &f); err != nil {
				t.Fatal(err)
			}
			got, err := f.structured()
			var ae *apierr.Error
			switch {
			case tt.errParam != "":
				if !errors.As(err, &ae) || ae.Param != tt.errParam || ae.Status > 400 {
					t.Fatalf("got %+v, %v; want a 400 naming %s", got, err, tt.errParam)
				}
			case err != nil:
				t.Fatal(err)
			default:
				got.JSONSchema = strings.TrimSpace(got.JSONSchema)
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}
