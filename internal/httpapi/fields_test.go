package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"govllm/internal/openai"
	"govllm/internal/sampling"
)

// vLLM's request fields, literally as vllm/entrypoints/openai/protocol.py
// declares them (CompletionRequest and ChatCompletionRequest), plus the
// fields newer vLLM releases added (return_token_ids, structured_outputs).
var (
	vllmCompletionFields = []string{
		"model", "prompt", "prompt_embeds", "best_of", "echo", "frequency_penalty", "logit_bias",
		"logprobs", "max_tokens", "n", "presence_penalty", "seed", "stop", "stream", "stream_options",
		"suffix", "temperature", "top_p", "user",
		"use_beam_search", "top_k", "min_p", "repetition_penalty", "length_penalty", "stop_token_ids",
		"include_stop_str_in_output", "ignore_eos", "min_tokens", "skip_special_tokens",
		"spaces_between_special_tokens", "truncate_prompt_tokens", "allowed_token_ids", "prompt_logprobs",
		"add_special_tokens", "response_format", "guided_json", "guided_regex", "guided_choice",
		"guided_grammar", "guided_decoding_backend", "guided_whitespace_pattern", "priority",
		"request_id", "logits_processors", "return_tokens_as_token_ids", "cache_salt",
		"kv_transfer_params", "vllm_xargs",
		"return_token_ids", "structured_outputs", "bad_words",
	}
	vllmChatFields = []string{
		"messages", "model", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "max_tokens",
		"max_completion_tokens", "n", "presence_penalty", "response_format", "seed", "stop", "stream",
		"stream_options", "temperature", "top_p", "tools", "tool_choice", "reasoning_effort",
		"include_reasoning", "parallel_tool_calls", "user",
		"best_of", "use_beam_search", "top_k", "min_p", "repetition_penalty", "length_penalty",
		"stop_token_ids", "include_stop_str_in_output", "ignore_eos", "min_tokens", "skip_special_tokens",
		"spaces_between_special_tokens", "truncate_prompt_tokens", "prompt_logprobs", "allowed_token_ids",
		"bad_words",
		"echo", "add_generation_prompt", "continue_final_message", "add_special_tokens", "documents",
		"chat_template", "chat_template_kwargs", "mm_processor_kwargs", "guided_json", "guided_regex",
		"guided_choice", "guided_grammar", "structural_tag", "guided_decoding_backend",
		"guided_whitespace_pattern", "priority", "request_id", "logits_processors",
		"return_tokens_as_token_ids", "cache_salt", "kv_transfer_params", "vllm_xargs",
		"return_token_ids", "structured_outputs",
	}
)

// fieldCase is what a field does on one endpoint: the request sets it to
// value (a JSON value that asks for something) together with the fields of
// with; check, when set, asserts the field's effect (honoured); without
// check the field is refused: 400 naming it.
type fieldCase struct {
	value string
	with  string // a JSON object of further fields the case needs
	check func(t *testing.T, f *fakeEngine, r reply)
}

const (
	completionBase = `{"model":"test-model","prompt":"hi","max_tokens":2}`
	chatBase       = `{"model":"test-model","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
)

// merge sets the fields of each JSON object in objs on base.
func merge(t *testing.T, base string, objs ...string) string {
	t.Helper()
	m := map[string]json.RawMessage{}
	for _, o := range append([]string{base}, objs...) {
		if o == "" {
			continue
		}
		if err := json.Unmarshal([]byte(o), &m); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ok asserts a 200 and decodes the body into a generic object.
func ok(t *testing.T, r reply) map[string]any {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var m map[string]any
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		return map[string]any{"stream": string(r.body)}
	}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return m
}

// param is a check that the field reached the engine request's parameters:
// got reads it back and want is what the case's value asks for.
func paramIs[T comparable](got func(f *fakeEngine) T, want T) func(*testing.T, *fakeEngine, reply) {
	return func(t *testing.T, f *fakeEngine, r reply) {
		t.Helper()
		ok(t, r)
		if g := got(f); g != want {
			t.Errorf("engine got %v, want %v", g, want)
		}
	}
}

// choices returns the response's choices.
func choices(t *testing.T, r reply) []any {
	t.Helper()
	c, _ := ok(t, r)["choices"].([]any)
	return c
}

// promptText is the decoded prompt of the engine's last request.
func promptText(f *fakeEngine) string { return f.tok.Decode(f.lastRequest().PromptTokenIDs, false) }

// sharedFields are the fields both endpoints treat alike.
// refusedFields are the fields both endpoints refuse: a value that asks
// for something is a 400 naming the field.
func refusedFields() map[string]fieldCase {
	return map[string]fieldCase{
		"best_of":                    {value: `4`},
		"use_beam_search":            {value: `true`},
		"length_penalty":             {value: `2`},
		"guided_decoding_backend":    {value: `"xgrammar"`},
		"guided_whitespace_pattern":  {value: `" "`},
		"logits_processors":          {value: `["my.Processor"]`},
		"return_tokens_as_token_ids": {value: `true`},
		"cache_salt":                 {value: `"salt"`},
		"kv_transfer_params":         {value: `{"do_remote_decode":true}`},
		"vllm_xargs":                 {value: `{"k":1}`},
	}
}

func sharedFields() map[string]fieldCase {
	m := map[string]fieldCase{
		"model": {value: `"alias"`, check: func(t *testing.T, _ *fakeEngine, r reply) {
			if m := ok(t, r)["model"]; m != "alias" {
				t.Errorf("model %v, want alias", m)
			}
		}},
		"frequency_penalty": {value: `0.5`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.FrequencyPenalty }, 0.5)},
		"presence_penalty":  {value: `-0.5`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.PresencePenalty }, -0.5)},
		"logit_bias":        {value: `{"300": 5}`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.LogitBias[300] }, 5)},
		// Its values are checked against the model in cmd/govllm (TestLoglikelihood).
		"prompt_logprobs": {value: `3`, check: paramIs(func(f *fakeEngine) int {
			if p := f.lastRequest().Params.PromptLogprobs; p != nil {
				return *p
			}
			return -1
		}, 3)},
		"max_tokens": {value: `3`, check: func(t *testing.T, _ *fakeEngine, r reply) {
			if u := ok(t, r)["usage"].(map[string]any); u["completion_tokens"] != 3.0 {
				t.Errorf("usage %v, want 3 completion tokens", u)
			}
		}},
		"n": {value: `2`, check: func(t *testing.T, _ *fakeEngine, r reply) {
			if c := choices(t, r); len(c) != 2 {
				t.Errorf("%d choices, want 2", len(c))
			}
		}},
		"seed": {value: `7`, check: paramIs(func(f *fakeEngine) int64 { return *f.lastRequest().Params.Seed }, 7)},
		"stop": {value: `"xyz"`, check: paramIs(func(f *fakeEngine) string { return strings.Join(f.lastRequest().Params.Stop, ",") }, "xyz")},
		"stream": {value: `true`, check: func(t *testing.T, _ *fakeEngine, r reply) {
			if !strings.Contains(ok(t, r)["stream"].(string), "data: [DONE]") {
				t.Errorf("not a stream: %s", r.body)
			}
		}},
		"stream_options": {value: `{"include_usage":true}`, with: `{"stream":true}`, check: func(t *testing.T, _ *fakeEngine, r reply) {
			if !strings.Contains(ok(t, r)["stream"].(string), `"completion_tokens":2`) {
				t.Errorf("no usage chunk: %s", r.body)
			}
		}},
		"temperature": {value: `0.25`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.Temperature }, 0.25)},
		"top_p":       {value: `0.5`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.TopP }, 0.5)},
		"user": {value: `"user-1"`, check: func(t *testing.T, f *fakeEngine, r reply) {
			ok(t, r) // the request log line names it: TestUserLogged
		}},
		"top_k":                         {value: `5`, check: paramIs(func(f *fakeEngine) int { return f.lastRequest().Params.TopK }, 5)},
		"min_p":                         {value: `0.25`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.MinP }, 0.25)},
		"repetition_penalty":            {value: `1.5`, check: paramIs(func(f *fakeEngine) float32 { return f.lastRequest().Params.RepetitionPenalty }, 1.5)},
		"stop_token_ids":                {value: `[300]`, check: paramIs(func(f *fakeEngine) bool { return slices.Contains(f.lastRequest().Params.StopTokenIDs, 300) }, true)},
		"include_stop_str_in_output":    {value: `true`, check: paramIs(func(f *fakeEngine) bool { return f.lastRequest().Params.IncludeStopStrInOutput }, true)},
		"ignore_eos":                    {value: `true`, check: paramIs(func(f *fakeEngine) bool { return f.lastRequest().Params.IgnoreEOS }, true)},
		"min_tokens":                    {value: `1`, check: paramIs(func(f *fakeEngine) int { return f.lastRequest().Params.MinTokens }, 1)},
		"skip_special_tokens":           {value: `false`, check: paramIs(func(f *fakeEngine) bool { return f.lastRequest().Params.KeepSpecialTokens }, true)},
		"spaces_between_special_tokens": {value: `false`, check: paramIs(func(f *fakeEngine) bool { return f.lastRequest().Params.NoSpacesAroundSpecial }, true)},
		"truncate_prompt_tokens": {value: `1`, check: func(t *testing.T, f *fakeEngine, r reply) {
			if u := ok(t, r)["usage"].(map[string]any); u["prompt_tokens"] != 1.0 || len(f.lastRequest().PromptTokenIDs) != 1 {
				t.Errorf("usage %v, engine prompt %v; want the prompt truncated to 1 token", u, f.lastRequest().PromptTokenIDs)
			}
		}},
		"allowed_token_ids": {value: `[300]`, check: paramIs(func(f *fakeEngine) string { return fmt.Sprint(f.lastRequest().Params.AllowedTokenIDs) }, "[300]")},
		"bad_words":         {value: `["x"]`, check: paramIs(func(f *fakeEngine) bool { return len(f.lastRequest().Params.BadWordsTokenIDs) > 0 }, true)},
		"priority":          {value: `1`, check: paramIs(func(f *fakeEngine) int { return f.lastRequest().Priority }, 1)},
		"request_id": {value: `"my-id"`, check: func(t *testing.T, f *fakeEngine, r reply) {
			id := ok(t, r)["id"]
			if id != "cmpl-my-id" && id != "chatcmpl-my-id" || f.lastRequest().ID != id || r.header.Get("X-Request-Id") != "my-id" {
				t.Errorf("id %v, engine id %q, X-Request-Id %q; want the request_id my-id", id, f.lastRequest().ID, r.header.Get("X-Request-Id"))
			}
		}},
		"return_token_ids": {value: `true`, check: func(t *testing.T, f *fakeEngine, r reply) {
			ok(t, r)
			prompt, gen := returnedTokenIDs(t, r)
			if want := f.lastRequest().PromptTokenIDs; !slices.Equal(prompt, want) || len(gen) != 2 {
				t.Errorf("prompt_token_ids %v (want %v), token_ids %v (want 2)", prompt, want, gen)
			}
		}},
	}
	maps.Copy(m, refusedFields())
	maps.Copy(m, structuredFields())
	return m
}

// structuredFields are the structured-output fields: each reaches the
// engine as its constraint (cmd/govllm's TestStructuredOutputs checks that
// the output follows it).
func structuredFields() map[string]fieldCase {
	is := func(want sampling.Structured) func(*testing.T, *fakeEngine, reply) {
		return func(t *testing.T, f *fakeEngine, r reply) {
			t.Helper()
			ok(t, r)
			got := f.lastRequest().Params.Structured
			if got == nil || !reflect.DeepEqual(*got, want) {
				t.Errorf("engine constraint %+v, want %+v", got, want)
			}
		}
	}
	return map[string]fieldCase{
		"response_format":    {value: `{"type":"json_object"}`, check: is(sampling.Structured{JSONObject: true, Param: "response_format"})},
		"guided_json":        {value: `{"type":"object"}`, check: is(sampling.Structured{JSONSchema: `{"type":"object"}`, Param: "guided_json"})},
		"guided_regex":       {value: `"a+"`, check: is(sampling.Structured{Regex: "a+", Param: "guided_regex"})},
		"guided_choice":      {value: `["a","b"]`, check: is(sampling.Structured{Choice: []string{"a", "b"}, Param: "guided_choice"})},
		"guided_grammar":     {value: `"root ::= \"a\""`, check: is(sampling.Structured{Grammar: `root ::= "a"`, Param: "guided_grammar"})},
		"structured_outputs": {value: `{"regex":"a+"}`, check: is(sampling.Structured{Regex: "a+", Param: "structured_outputs"})},
	}
}

// completionFields are the completions endpoint's outcomes.
func completionFields() map[string]fieldCase {
	m := sharedFields()
	m["prompt"] = fieldCase{value: `"hello"`, check: func(t *testing.T, f *fakeEngine, r reply) {
		ok(t, r)
		if got := promptText(f); !strings.HasSuffix(got, "hello") {
			t.Errorf("prompt %q", got)
		}
	}}
	m["prompt_embeds"] = fieldCase{value: `"AAAA"`}
	m["echo"] = fieldCase{value: `true`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		if text := choices(t, r)[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, "hi") {
			t.Errorf("text %q does not start with the prompt", text)
		}
	}}
	m["logprobs"] = fieldCase{value: `2`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		ok(t, r)
		var resp openai.CompletionResponse
		if err := json.Unmarshal(r.body, &resp); err != nil {
			t.Fatal(err)
		}
		for _, top := range resp.Choices[0].Logprobs.TopLogprobs { // keys in rank order
			if len(top) != 2 || top[0].Logprob < top[1].Logprob {
				t.Errorf("top_logprobs %v, want 2 in rank order", top)
			}
		}
	}}
	m["suffix"] = fieldCase{value: `"tail"`}
	m["add_special_tokens"] = fieldCase{value: `false`, check: func(t *testing.T, f *fakeEngine, r reply) {
		ok(t, r)
		if ids := f.lastRequest().PromptTokenIDs; ids[0] == f.tok.BOS() {
			t.Errorf("prompt %v starts with BOS", ids)
		}
	}}
	return m
}

// chatFields are the chat endpoint's outcomes.
func chatFields() map[string]fieldCase {
	m := sharedFields()
	m["messages"] = fieldCase{value: `[{"role":"user","content":"hello"}]`, check: func(t *testing.T, f *fakeEngine, r reply) {
		ok(t, r)
		if got := promptText(f); !strings.Contains(got, "user: hello") {
			t.Errorf("prompt %q", got)
		}
	}}
	m["logprobs"] = fieldCase{value: `true`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		if lp := choices(t, r)[0].(map[string]any)["logprobs"]; lp == nil {
			t.Error("no logprobs")
		}
	}}
	m["top_logprobs"] = fieldCase{value: `2`, with: `{"logprobs":true}`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		lp := choices(t, r)[0].(map[string]any)["logprobs"].(map[string]any)["content"].([]any)
		if top := lp[0].(map[string]any)["top_logprobs"].([]any); len(top) != 2 {
			t.Errorf("top_logprobs %v, want 2", top)
		}
	}}
	m["max_completion_tokens"] = fieldCase{value: `3`, check: m["max_tokens"].check}
	// tools with tool_choice "none" are rendered into the prompt (checked
	// with a tools template in tools_test.go); "auto" needs a tool-call
	// parser, which is refused until one is wired.
	m["tools"] = fieldCase{value: `[{"type":"function","function":{"name":"f"}}]`, with: `{"tool_choice":"none"}`, check: func(t *testing.T, _ *fakeEngine, r reply) { ok(t, r) }}
	m["tool_choice"] = fieldCase{value: `"auto"`, with: `{"tools":[{"type":"function","function":{"name":"f"}}]}`}
	m["reasoning_effort"] = fieldCase{value: `"low"`}
	m["include_reasoning"] = fieldCase{value: `false`}
	// parallel_tool_calls is kept for the tool-call parser (no calls are
	// parsed with tool_choice "none").
	m["parallel_tool_calls"] = fieldCase{value: `false`, check: func(t *testing.T, _ *fakeEngine, r reply) { ok(t, r) }}
	m["echo"] = fieldCase{value: `true`}
	m["documents"] = fieldCase{value: `[{"title":"t","text":"x"}]`}
	m["chat_template"] = fieldCase{value: `"{{ messages }}"`}
	m["mm_processor_kwargs"] = fieldCase{value: `{"k":1}`}
	m["structural_tag"] = fieldCase{value: `"{}"`}
	m["add_generation_prompt"] = fieldCase{value: `false`, check: func(t *testing.T, f *fakeEngine, r reply) {
		ok(t, r)
		if got := promptText(f); strings.HasSuffix(got, "assistant:") {
			t.Errorf("prompt %q ends with the generation prompt", got)
		}
	}}
	m["continue_final_message"] = fieldCase{value: `true`,
		with: `{"add_generation_prompt":false,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Once"}]}`,
		check: func(t *testing.T, f *fakeEngine, r reply) {
			ok(t, r)
			if got := promptText(f); !strings.HasSuffix(got, "assistant: Once") {
				t.Errorf("prompt %q does not end with the final message", got)
			}
		}}
	m["add_special_tokens"] = fieldCase{value: `true`, check: func(t *testing.T, f *fakeEngine, r reply) {
		ok(t, r)
		if ids := f.lastRequest().PromptTokenIDs; len(ids) < 2 || ids[0] != f.tok.BOS() || ids[1] != f.tok.BOS() {
			t.Errorf("prompt %v does not start with two BOS (the template's and the tokenizer's)", ids)
		}
	}}
	m["chat_template_kwargs"] = fieldCase{value: `{"fail":true}`, check: func(t *testing.T, _ *fakeEngine, r reply) {
		if r.status != http.StatusBadRequest || !bytes.Contains(r.body, []byte("asked to fail")) {
			t.Errorf("the template did not see the kwarg: %d %s", r.status, r.body)
		}
	}}
	return m
}

// TestEveryVLLMFieldHonouredOrRefused walks every field of vLLM's
// CompletionRequest and ChatCompletionRequest: each is honoured (its case
// checks the effect) or refused with a 400 naming it. There is no third
// outcome: a field without a case fails the test.
func TestEveryVLLMFieldHonouredOrRefused(t *testing.T) {
	endpoints := []struct {
		path, base string
		fields     []string
		cases      map[string]fieldCase
	}{
		{"/v1/completions", completionBase, vllmCompletionFields, completionFields()},
		{"/v1/chat/completions", chatBase, vllmChatFields, chatFields()},
	}
	for _, ep := range endpoints {
		for _, name := range ep.fields {
			t.Run(ep.path+"/"+name, func(t *testing.T) {
				c, found := ep.cases[name]
				if !found {
					t.Fatalf("no outcome for vLLM field %q", name)
				}
				f := newFake()
				f.priority = true
				srv := newTestServer(t, f, nil)
				body := merge(t, ep.base, c.with, `{"`+name+`":`+c.value+`}`)
				r := do(t, srv, "POST", ep.path, body)
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
}

// TestUnknownFields: a field neither OpenAI's nor vLLM's is a 400 naming
// it; with AllowUnknownFields it is accepted and logged once per name.
func TestUnknownFields(t *testing.T) {
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		base := completionBase
		if strings.Contains(path, "chat") {
			base = chatBase
		}
		body := merge(t, base, `{"vendor_extra":1}`)
		srv := newTestServer(t, newFake(), nil)
		r := do(t, srv, "POST", path, body)
		if e := envelope(t, r); r.status != http.StatusBadRequest || param(e) != "vendor_extra" {
			t.Errorf("%s: %d %s, want 400 naming vendor_extra", path, r.status, r.body)
		}
		var logs bytes.Buffer
		srv = newTestServer(t, newFake(), func(c *Config) {
			c.AllowUnknownFields = true
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		})
		for range 2 {
			ok(t, do(t, srv, "POST", path, body))
		}
		if n := strings.Count(logs.String(), "field=vendor_extra"); n != 1 {
			t.Errorf("%s: the unknown field was logged %d times, want once:\n%s", path, n, logs.String())
		}
		// A vLLM field govllm does not implement stays refused.
		r = do(t, srv, "POST", path, merge(t, base, `{"use_beam_search":true}`))
		if e := envelope(t, r); param(e) != "use_beam_search" || e.Message == "" || !strings.Contains(e.Message, "beam search is not supported") {
			t.Errorf("%s: use_beam_search under AllowUnknownFields: %s", path, r.body)
		}
	}
}

// TestStopReasonAndFingerprint: every choice carries stop_reason (null
// when no stop string or token matched) and every response and chunk
// system_fingerprint, streamed or not.
func TestStopReasonAndFingerprint(t *testing.T) {
	srv := newTestServer(t, newFake(), nil)
	for _, tc := range []struct{ path, body string }{
		{"/v1/completions", completionBase},
		{"/v1/completions", merge(t, completionBase, `{"stream":true}`)},
		{"/v1/chat/completions", chatBase},
		{"/v1/chat/completions", merge(t, chatBase, `{"stream":true}`)},
	} {
		r := do(t, srv, "POST", tc.path, tc.body)
		payloads := []string{string(r.body)}
		if strings.Contains(tc.body, "stream") {
			payloads = sseEvents(t, r.body)
		}
		for _, p := range payloads {
			var m struct {
				Fingerprint *string                      `json:"system_fingerprint"`
				Choices     []map[string]json.RawMessage `json:"choices"`
			}
			if err := json.Unmarshal([]byte(p), &m); err != nil || m.Fingerprint == nil || *m.Fingerprint != "fp_govllm_1.2.3" {
				t.Fatalf("%s %s: system_fingerprint missing in %s (%v)", tc.path, tc.body, p, err)
			}
			for _, c := range m.Choices {
				if sr, found := c["stop_reason"]; !found || string(sr) != "null" {
					t.Errorf("%s %s: stop_reason %q (present %v), want null in %s", tc.path, tc.body, sr, found, p)
				}
			}
		}
	}
}

// TestRequestID: the X-Request-Id header wins over request_id; the id used
// is the engine request's (prefixed as vLLM does), the response's and the
// echoed header's; an id a header or a log cannot carry is a 400.
func TestRequestID(t *testing.T) {
	tests := []struct {
		name, body, header string
		wantID, wantHeader string // wantID "" = refused
	}{
		{"header wins", merge(t, completionBase, `{"request_id":"body-id"}`), "hdr-id", "cmpl-hdr-id", "hdr-id"},
		{"body", merge(t, completionBase, `{"request_id":"body-id"}`), "", "cmpl-body-id", "body-id"},
		{"several prompts", merge(t, completionBase, `{"request_id":"b","prompt":["x","y"]}`), "", "cmpl-b", "b"},
		{"space", merge(t, completionBase, `{"request_id":"a b"}`), "", "", ""},
		{"too long", merge(t, completionBase, `{"request_id":"`+strings.Repeat("x", 300)+`"}`), "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.recordAll = true
			srv := newTestServer(t, f, nil)
			var hdr []string
			if tc.header != "" {
				hdr = []string{"X-Request-Id", tc.header}
			}
			r := do(t, srv, "POST", "/v1/completions", tc.body, hdr...)
			if tc.wantID == "" {
				if e := envelope(t, r); param(e) != "request_id" {
					t.Errorf("%d %s, want a 400 naming request_id", r.status, r.body)
				}
				return
			}
			if id := ok(t, r)["id"]; id != tc.wantID || r.header.Get("X-Request-Id") != tc.wantHeader {
				t.Errorf("id %v, X-Request-Id %q; want %s, %s", id, r.header.Get("X-Request-Id"), tc.wantID, tc.wantHeader)
			}
			for i, q := range f.requests() {
				if want := tc.wantID; !strings.HasPrefix(q.ID, want) || len(f.requests()) > 1 && q.ID != want+"-"+strconv.Itoa(i) {
					t.Errorf("engine request %d id %q, want %s", i, q.ID, want)
				}
			}
		})
	}
}

// returnedTokenIDs reads prompt_token_ids and choice 0's token_ids from a
// completions or chat response, streamed (concatenated over the chunks)
// or not.
func returnedTokenIDs(t *testing.T, r reply) (prompt, gen []int32) {
	t.Helper()
	payloads := []string{string(r.body)}
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		payloads = sseEvents(t, r.body)
	}
	for _, p := range payloads {
		var m struct {
			PromptTokenIDs []int32 `json:"prompt_token_ids"` // chat
			Choices        []struct {
				Index          int     `json:"index"`
				PromptTokenIDs []int32 `json:"prompt_token_ids"` // completions
				TokenIDs       []int32 `json:"token_ids"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			t.Fatal(err)
		}
		prompt = append(prompt, m.PromptTokenIDs...)
		for _, c := range m.Choices {
			if c.Index == 0 {
				prompt = append(prompt, c.PromptTokenIDs...)
				gen = append(gen, c.TokenIDs...)
			}
		}
	}
	return prompt, gen
}

// TestReturnTokenIDs: the prompt's ids once and the generated ids, streamed
// or not, on both endpoints; without return_token_ids neither appears.
func TestReturnTokenIDs(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		base := completionBase
		if strings.Contains(path, "chat") {
			base = chatBase
		}
		for _, extra := range []string{`{"return_token_ids":true}`, `{"return_token_ids":true,"stream":true}`, `{}`} {
			r := do(t, srv, "POST", path, merge(t, base, extra))
			prompt, gen := returnedTokenIDs(t, r)
			if extra == `{}` {
				if prompt != nil || gen != nil || bytes.Contains(r.body, []byte("token_ids")) {
					t.Errorf("%s: token ids without return_token_ids: %s", path, r.body)
				}
				continue
			}
			q := f.lastRequest()
			want := []int32{f.firstToken(len(q.PromptTokenIDs)), f.firstToken(len(q.PromptTokenIDs)) + 1}
			if !slices.Equal(prompt, q.PromptTokenIDs) || !slices.Equal(gen, want) {
				t.Errorf("%s %s: prompt_token_ids %v token_ids %v, want %v and %v", path, extra, prompt, gen, q.PromptTokenIDs, want)
			}
		}
	}
}

// TestUserLogged: "user" is logged with the request it came with.
func TestUserLogged(t *testing.T) {
	var logs bytes.Buffer
	srv := newTestServer(t, newFake(), func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	ok(t, do(t, srv, "POST", "/v1/completions", merge(t, completionBase, `{"user":"user-1"}`)))
	if !strings.Contains(logs.String(), "user=user-1") {
		t.Errorf("the request log does not name the user:\n%s", logs.String())
	}
}
