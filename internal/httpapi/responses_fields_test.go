package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// vllmResponsesFields are vLLM's ResponsesRequest fields, literally as
// vllm/entrypoints/openai/responses/protocol.py declares them.
var vllmResponsesFields = []string{
	"background", "include", "input", "instructions", "max_output_tokens", "max_tool_calls", "metadata",
	"model", "logit_bias", "parallel_tool_calls", "previous_response_id", "prompt", "reasoning",
	"service_tier", "store", "stream", "temperature", "text", "tool_choice", "tools", "top_logprobs",
	"top_p", "top_k", "truncation", "user", "skip_special_tokens", "include_stop_str_in_output",
	"prompt_cache_key", "request_id", "media_io_kwargs", "mm_processor_kwargs", "priority", "cache_salt",
	"kv_transfer_params", "enable_response_messages", "chat_template_kwargs", "previous_input_messages",
	"structured_outputs", "repetition_penalty", "seed", "stop", "ignore_eos", "vllm_xargs",
}

const responsesBase = `{"model":"test-model","input":"hi","max_output_tokens":2}`

// echoed checks that the response echoes field as want (JSON).
func echoed(field, want string) func(*testing.T, *fakeEngine, reply) {
	return func(t *testing.T, _ *fakeEngine, r reply) {
		t.Helper()
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		if got := ok(t, r)[field]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s echoed as %v, want %s", field, got, want)
		}
	}
}

// responsesFields is what each vLLM field does on /v1/responses.
func responsesFields() map[string]fieldCase {
	shared := sharedFields()
	m := map[string]fieldCase{}
	for _, k := range []string{"model", "logit_bias", "temperature", "top_p", "top_k", "user", "skip_special_tokens",
		"include_stop_str_in_output", "priority", "repetition_penalty", "seed", "stop", "ignore_eos"} {
		m[k] = shared[k]
	}
	for k, c := range refusedFields() {
		m[k] = c
	}
	for _, k := range []string{"background", "include", "prompt", "top_logprobs", "truncation", "prompt_cache_key",
		"media_io_kwargs", "mm_processor_kwargs", "enable_response_messages", "previous_input_messages"} {
		m[k] = fieldCase{value: map[string]string{"background": `true`, "include": `["reasoning.encrypted_content"]`,
			"prompt": `{"id":"pmpt_1"}`, "top_logprobs": `3`, "truncation": `"auto"`, "prompt_cache_key": `"k"`,
			"media_io_kwargs": `{"image":{}}`, "mm_processor_kwargs": `{"a":1}`, "enable_response_messages": `true`,
			"previous_input_messages": `[{"role":"user","content":"x"}]`}[k]}
	}
	tools := `{"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`
	m["input"] = fieldCase{value: `[{"role":"user","content":[{"type":"input_text","text":"knock knock"}]}]`, check: func(t *testing.T, f *fakeEngine, r reply) {
		if ok(t, r); !strings.Contains(promptText(f), "knock knock") {
			t.Errorf("prompt %q", promptText(f))
		}
	}}
	m["instructions"] = fieldCase{value: `"Obey the rules."`, check: func(t *testing.T, f *fakeEngine, r reply) {
		if ok(t, r); !strings.Contains(promptText(f), "Obey the rules.") {
			t.Errorf("prompt %q", promptText(f))
		}
	}}
	m["max_output_tokens"] = fieldCase{value: `3`, check: func(t *testing.T, f *fakeEngine, r reply) {
		if u := ok(t, r)["usage"].(map[string]any); u["output_tokens"] != 3.0 || f.lastRequest().Params.MaxTokens != 3 {
			t.Errorf("usage %v, want 3 output tokens", u)
		}
	}}
	m["max_tool_calls"] = fieldCase{value: `2`, check: echoed("max_tool_calls", `2`)}
	m["metadata"] = fieldCase{value: `{"k":"v"}`, check: echoed("metadata", `{"k":"v"}`)}
	m["parallel_tool_calls"] = fieldCase{value: `false`, with: `{"tools":[{"type":"function","name":"f"}],"tool_choice":"none"}`, check: echoed("parallel_tool_calls", `false`)}
	m["previous_response_id"] = fieldCase{value: `"resp_unknown"`, check: func(t *testing.T, f *fakeEngine, r reply) {
		if e := envelope(t, r); r.status != http.StatusNotFound || param(e) != "previous_response_id" {
			t.Errorf("status %d %s: an unknown id is looked up and answers 404", r.status, r.body)
		}
	}}
	m["reasoning"] = fieldCase{value: `{"effort":"none"}`, check: echoed("reasoning", `{"effort":"none"}`)}
	m["service_tier"] = fieldCase{value: `"default"`, check: echoed("service_tier", `"default"`)}
	m["store"] = fieldCase{value: `false`, check: echoed("store", `false`)}
	m["stream"] = fieldCase{value: `true`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		if !strings.Contains(string(r.body), "event: response.completed\ndata: ") && !strings.Contains(string(r.body), "event: response.incomplete\ndata: ") {
			t.Errorf("not a typed event stream: %s", r.body)
		}
	}}
	m["text"] = fieldCase{value: `{"format":{"type":"json_object"}}`, check: paramIs(func(f *fakeEngine) bool {
		return f.lastRequest().Params.Structured != nil && f.lastRequest().Params.Structured.JSONObject
	}, true)}
	m["structured_outputs"] = fieldCase{value: `{"regex":"a+"}`, check: paramIs(func(f *fakeEngine) string {
		if s := f.lastRequest().Params.Structured; s != nil {
			return s.Regex
		}
		return ""
	}, "a+")}
	m["tools"] = fieldCase{value: `[{"type":"function","name":"f","description":"d","parameters":{"type":"object"}}]`, with: `{"tool_choice":"none"}`,
		check: echoed("tools", `[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":null}]`)}
	m["tool_choice"] = fieldCase{value: `"none"`, with: tools, check: echoed("tool_choice", `"none"`)}
	m["request_id"] = fieldCase{value: `"my-id"`, check: echoed("id", `"resp_my-id"`)}
	m["chat_template_kwargs"] = fieldCase{value: `{"fail":true}`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		if e := envelope(t, r); r.status != http.StatusBadRequest || !strings.Contains(e.Message, "asked to fail") {
			t.Errorf("status %d %s: the kwargs must reach the template", r.status, r.body)
		}
	}}
	return m
}

func TestEveryVLLMResponsesFieldHonouredOrRefused(t *testing.T) {
	cases := responsesFields()
	for _, name := range vllmResponsesFields {
		t.Run(name, func(t *testing.T) {
			c, found := cases[name]
			if !found {
				t.Fatalf("no outcome for vLLM field %q", name)
			}
			f := newFake()
			f.priority = true
			srv := newTestServer(t, f, nil)
			body := merge(t, responsesBase, c.with, `{"`+name+`":`+c.value+`}`)
			r := do(t, srv, "POST", "/v1/responses", body)
			if c.check != nil {
				c.check(t, f, r)
				return
			}
			if r.status != http.StatusBadRequest {
				t.Fatalf("%s: status %d, want 400 (refused): %s", body, r.status, r.body)
			}
			if e := envelope(t, r); param(e) != name {
				t.Errorf("param %q, want %q (%s)", param(e), name, e.Message)
			}
			if f.calls.Load() != 0 {
				t.Error("a refused request reached the engine")
			}
		})
	}
}
