package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"govllm/internal/jsonvalue"
	"govllm/internal/sampling"
)

// The expected messages follow vLLM's construct_chat_messages_with_tool_call
// (vllm/entrypoints/openai/responses/utils.py): a function_call joins the
// preceding assistant message's tool_calls, or starts an assistant message
// with null content; an assistant message after a call-only one fills its
// content; function_call_output is a tool message.
func TestParseResponsesInput(t *testing.T) {
	call := func(id, name, args string) MessageToolCall {
		return MessageToolCall{ID: id, Type: "function", Function: FunctionCall{Name: name, Arguments: args}}
	}
	tests := []struct {
		name, input string
		want        []ChatMessage
		cont        bool
	}{
		{"string", `"Hi"`, []ChatMessage{{Role: "user", Content: "Hi"}}, false},
		{"parts", `[{"type":"message","role":"developer","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]`,
			[]ChatMessage{{Role: "developer", Content: "a\nb", Parts: []string{"a", "b"}}}, false},
		{"call and output", `[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"r"}]`,
			[]ChatMessage{{Role: "user", Content: "q"}, {Role: "assistant", Parts: []string{}, ToolCalls: []MessageToolCall{call("c1", "f", "{}")}},
				{Role: "tool", Content: "r", ToolCallID: "c1"}}, false},
		{"calls join the message", `[{"role":"assistant","content":[{"type":"output_text","text":"t","annotations":[]}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"g","arguments":"{\"a\":1}"}]`,
			[]ChatMessage{{Role: "assistant", Content: "t", Parts: []string{"t"}, ToolCalls: []MessageToolCall{call("c1", "f", "{}"), call("c2", "g", `{"a":1}`)}}}, false},
		{"message fills the calls' content", `[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"role":"assistant","content":"t"}]`,
			[]ChatMessage{{Role: "assistant", Content: "t", ToolCalls: []MessageToolCall{call("c1", "f", "{}")}}}, false},
		{"partial final message", `[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":"Once","status":"incomplete"}]`,
			[]ChatMessage{{Role: "user", Content: "q"}, {Role: "assistant", Content: "Once"}}, true},
		{"partial message not last", `[{"role":"assistant","content":"Once","status":"in_progress"},{"role":"user","content":"q"}]`,
			[]ChatMessage{{Role: "assistant", Content: "Once"}, {Role: "user", Content: "q"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseResponsesInput(json.RawMessage(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in.Messages, tc.want) || in.Continue != tc.cont {
				t.Fatalf("got %+v continue %v\nwant %+v continue %v", in.Messages, in.Continue, tc.want, tc.cont)
			}
		})
	}
}

// reasoning.effort sets the template variables vLLM's build_chat_params
// sets; the request's chat_template_kwargs win.
func TestResponsesTemplateKwargs(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"input":"x"}`, `null`},
		{`{"input":"x","reasoning":{"effort":"none"}}`, `{"enable_thinking":false,"reasoning_effort":"none"}`},
		{`{"input":"x","reasoning":{"effort":"minimal"}}`, `{"enable_thinking":true,"low_effort":true,"reasoning_effort":"low"}`},
		{`{"input":"x","reasoning":{"effort":"high"}}`, `{"enable_thinking":true,"reasoning_effort":"high"}`},
		{`{"input":"x","reasoning":{"effort":"high"},"chat_template_kwargs":{"enable_thinking":false}}`, `{"enable_thinking":false,"reasoning_effort":"high"}`},
	}
	for _, tc := range tests {
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
			t.Fatal(err)
		}
		if err := r.Check(); err != nil {
			t.Fatal(err)
		}
		var kw *jsonvalue.Object = r.TemplateKwargs()
		got, _ := json.Marshal(kw)
		if string(got) != tc.want {
			t.Errorf("%s: kwargs %s, want %s", tc.body, got, tc.want)
		}
	}
}

// text.format json_schema is a compact JSON-schema constraint (vLLM's
// disable_any_whitespace); json_object and text as in chat.
func TestResponsesTextFormat(t *testing.T) {
	tests := []struct {
		body string
		want *sampling.Structured
	}{
		{`{"text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object"},"strict":true}}}`,
			&sampling.Structured{JSONSchema: `{"type":"object"}`, Compact: true, Param: "text.format"}},
		{`{"text":{"format":{"type":"json_object"}}}`, &sampling.Structured{JSONObject: true, Param: "text.format"}},
		{`{"text":{"format":{"type":"text"}}}`, nil},
		{`{"structured_outputs":{"regex":"a+"}}`, &sampling.Structured{Regex: "a+", Param: "structured_outputs"}},
	}
	for _, tc := range tests {
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
			t.Fatal(err)
		}
		p, err := r.SamplingParams(sampling.Default())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Structured, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.body, p.Structured, tc.want)
		}
	}
}
