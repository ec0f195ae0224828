package openai

import (
	"reflect"
	"strings"
	"testing"

	"govllm/internal/apierr"
)

// An unsupported field is no field of a request type: once a field is
// implemented (added to the wire type), it leaves the unsupported table.
func TestUnsupportedFieldsAreNotRequestFields(t *testing.T) {
	for _, v := range []any{&CompletionRequest{}, &ChatCompletionRequest{}} {
		known := fieldNames(reflect.TypeOf(v))
		for name := range unsupported {
			if known[name] {
				t.Errorf("%T has field %q, which the unsupported table refuses", v, name)
			}
		}
	}
}

func TestDecodeRequestFields(t *testing.T) {
	tests := []struct {
		body    string
		unknown bool   // accept unknown fields
		param   string // "" = accepted
	}{
		{`{"prompt":"a"}`, false, ""},
		{`{"prompt":"a","zzz":1,"aaa":2}`, false, "aaa"}, // the first in name order
		{`{"prompt":"a","zzz":1}`, true, ""},
		{`{"prompt":"a","use_beam_search":false,"length_penalty":1.0,"guided_json":null}`, false, ""}, // defaults ask for nothing
		{`{"prompt":"a","use_beam_search":true}`, true, "use_beam_search"},
		{`{"prompt":"a","length_penalty":0.5}`, false, "length_penalty"},
		{`{"prompt":"a","bad_words":[]}`, false, ""},
	}
	for _, tc := range tests {
		var seen []string
		var onUnknown func(string)
		if tc.unknown {
			onUnknown = func(f string) { seen = append(seen, f) }
		}
		var req CompletionRequest
		err := DecodeRequest(strings.NewReader(tc.body), &req, onUnknown)
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			if tc.unknown && !reflect.DeepEqual(seen, []string{"zzz"}) {
				t.Errorf("%s: unknown fields reported %v, want [zzz]", tc.body, seen)
			}
			continue
		}
		if e, ok := err.(*apierr.Error); !ok || e.Param != tc.param {
			t.Errorf("%s: %v, want a 400 naming %s", tc.body, err, tc.param)
		}
	}
}
