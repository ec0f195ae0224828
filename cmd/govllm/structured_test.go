package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"govllm/internal/testmodels"
)

// personSchema is the JSON Schema of the structured-output tests.
const personSchema = `{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":150},"pets":{"type":"array","items":{"enum":["cat","dog"]},"maxItems":2}},"required":["name","age"],"additionalProperties":false}`

// TestStructuredOutputs: over HTTP against the real server, the output of
// a random-weight model (whose unconstrained text is gibberish) and of
// stories260K follows each constraint — JSON Schema (checked with a JSON
// Schema validator), json_object, regex, choice, grammar — for
// completions and chat, vLLM's and OpenAI's spellings, streamed or not;
// unsupported, invalid and malformed constraints are 400s naming the field.
func TestStructuredOutputs(t *testing.T) {
	noLeaks(t)
	person := compileSchema(t, personSchema)
	anyObject := compileSchema(t, `{"type":"object"}`)
	for _, model := range []string{"dummy", "stories260K"} {
		t.Run(model, func(t *testing.T) {
			cfg := testServeConfig()
			cfg.MaxModelLen = 512
			if model == "stories260K" {
				cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
			}
			url, stop := startServe(t, cfg)
			defer func() {
				if err := stop(); err != nil {
					t.Error(err)
				}
			}()
			tests := []struct {
				name, path, body string
				check            func(out string) bool
				mayBeCut         bool // finish "length" allowed: the output is a JSON prefix
			}{
				{"chat json_schema", "/v1/chat/completions", `{"messages":[{"role":"user","content":"Who?"}],"max_tokens":400,"temperature":1,"seed":1,"response_format":{"type":"json_schema","json_schema":{"name":"person","schema":` + personSchema + `}}}`, valid(person), false},
				{"completions json_schema streamed", "/v1/completions", `{"prompt":"Once upon a time","max_tokens":400,"temperature":1,"seed":2,"stream":true,"response_format":{"type":"json_schema","json_schema":{"name":"person","schema":` + personSchema + `}}}`, valid(person), false},
				{"completions guided_json", "/v1/completions", `{"prompt":"Lily","max_tokens":400,"temperature":0.8,"seed":3,"guided_json":` + personSchema + `}`, valid(person), false},
				// Any JSON object may be longer than max_tokens: a cut one
				// must be a prefix of valid JSON.
				{"chat json_object", "/v1/chat/completions", `{"messages":[{"role":"user","content":"JSON"}],"max_tokens":400,"temperature":1,"seed":4,"response_format":{"type":"json_object"}}`, valid(anyObject), true},
				{"completions regex", "/v1/completions", `{"prompt":"Code:","max_tokens":40,"temperature":1,"seed":5,"structured_outputs":{"regex":"[0-9]{3}-[a-z]{2,4}"}}`, regexp.MustCompile(`^[0-9]{3}-[a-z]{2,4}$`).MatchString, false},
				{"chat choice", "/v1/chat/completions", `{"messages":[{"role":"user","content":"?"}],"max_tokens":40,"temperature":1,"seed":6,"structured_outputs":{"choice":["yes","no","maybe"]}}`, func(s string) bool { return slices.Contains([]string{"yes", "no", "maybe"}, s) }, false},
				{"completions grammar", "/v1/completions", `{"prompt":"Say","max_tokens":40,"temperature":1,"seed":7,"guided_grammar":"root ::= \"(\" [ab]{1,3} \")\""}`, regexp.MustCompile(`^\([ab]{1,3}\)$`).MatchString, false},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := post(t, url, tt.path, tt.body)
					if r.status != 200 {
						t.Fatalf("%d %s", r.status, r.body)
					}
					out, finish := generatedText(t, r.body)
					if tt.mayBeCut && finish == "length" {
						if !jsonPrefix(out) {
							t.Fatalf("cut output %q is not a prefix of valid JSON", out)
						}
						return
					}
					if finish != "stop" || !tt.check(out) {
						t.Fatalf("finish %q, output %q does not follow the constraint", finish, out)
					}
				})
			}
		})
	}
}

// TestStructuredOutputsRefused: a constraint that cannot be enforced, is
// not a valid schema or is malformed is a 400 naming its field, before
// the engine sees the request.
func TestStructuredOutputsRefused(t *testing.T) {
	noLeaks(t)
	url, stop := startServe(t, testServeConfig())
	defer stop()
	tests := []struct{ name, body, param, msg string }{
		{"unsupported feature", `{"prompt":"a","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"array","uniqueItems":true}}}}`, "response_format", "uniqueItems"},
		{"invalid schema", `{"prompt":"a","structured_outputs":{"json":{"type":"objekt"}}}`, "structured_outputs", "invalid JSON Schema"},
		{"bad regex", `{"prompt":"a","guided_regex":"([a-z"}`, "guided_regex", ""},
		{"schema not an object", `{"prompt":"a","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":[1]}}}`, "response_format", "JSON Schema object"},
		{"two constraints", `{"prompt":"a","guided_regex":"a","response_format":{"type":"json_object"}}`, "guided_regex", "only one"},
		{"two forms in structured_outputs", `{"prompt":"a","structured_outputs":{"regex":"a","choice":["b"]}}`, "structured_outputs", "exactly one"},
		{"unknown response_format type", `{"prompt":"a","response_format":{"type":"xml"}}`, "response_format", "xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, url, "/v1/completions", tt.body)
			if r.status != 400 || r.param != tt.param || !strings.Contains(r.body, tt.msg) {
				t.Fatalf("got %d param %q: %s; want 400 naming %s and containing %q", r.status, r.param, r.body, tt.param, tt.msg)
			}
		})
	}
	stillServing(t, url, 200)
}

func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("urn:schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// valid reports whether an output is a JSON document the schema accepts.
func valid(s *jsonschema.Schema) func(string) bool {
	return func(out string) bool {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		return err == nil && s.Validate(v) == nil
	}
}

// jsonPrefix reports whether out is a prefix of a JSON object: the
// standard decoder reads it to its end without a syntax error.
func jsonPrefix(out string) bool {
	if !strings.HasPrefix(strings.TrimLeft(out, " \t\r\n"), "{") {
		return false
	}
	d := json.NewDecoder(strings.NewReader(out))
	for {
		_, err := d.Token()
		if err != nil {
			return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		}
	}
}

// generatedText is the generated text and finish reason of a completions
// or chat reply, streamed (SSE) or not.
func generatedText(t *testing.T, body string) (text, finish string) {
	t.Helper()
	type choice struct {
		Text    string `json:"text"`
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	}
	var b strings.Builder
	add := func(raw []byte) {
		var r struct{ Choices []choice }
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		for _, c := range r.Choices {
			b.WriteString(c.Text + c.Message.Content)
			if c.Delta.Content != nil {
				b.WriteString(*c.Delta.Content)
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if !strings.HasPrefix(body, "data: ") {
		add([]byte(body))
		return b.String(), finish
	}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(line, "data: ")
		if line == "" || line == "[DONE]" {
			continue
		}
		add(bytes.TrimSpace([]byte(line)))
	}
	return b.String(), finish
}
