package openai

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"govllm/internal/apierr"
)

// Every refusal names the offending field by its JSON path, as OpenAI's
// and vLLM's 400s do.
func TestCheckMessagesParams(t *testing.T) {
	call := `{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}`
	tests := []struct{ name, messages, param string }{
		{"ok tool conversation", `[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[` + call + `]},{"role":"tool","tool_call_id":"c1","name":"f","content":"ok"}]`, ""},
		{"SDK echoes nulls", `[{"role":"assistant","content":"x","refusal":null,"function_call":null,"audio":null}]`, ""},
		{"object arguments", `[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]}]`, ""},
		{"image part", `[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]`, "messages[2].content[0].type"},
		{"part without type", `[{"role":"user","content":[{"text":"a"}]}]`, "messages[0].content[0].type"},
		{"text part without text", `[{"role":"user","content":[{"type":"text"}]}]`, "messages[0].content[0].text"},
		{"part with unknown key", `[{"role":"user","content":[{"type":"text","text":"a","cache_control":{}}]}]`, "messages[0].content[0]"},
		{"content a number", `[{"role":"user","content":5}]`, "messages[0].content"},
		{"unknown message field", `[{"role":"user","content":"a","reasoning_content":"r"}]`, "messages[0].reasoning_content"},
		{"role not a string", `[{"role":5,"content":"a"}]`, "messages[0].role"},
		{"tool_calls on user", `[{"role":"user","content":"a","tool_calls":[` + call + `]}]`, "messages[0].tool_calls"},
		{"tool without tool_call_id", `[{"role":"tool","content":"a"}]`, "messages[0].tool_call_id"},
		{"tool_call_id on user", `[{"role":"user","content":"a","tool_call_id":"x"}]`, "messages[0].tool_call_id"},
		{"call without id", `[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]`, "messages[0].tool_calls[0].id"},
		{"call of another type", `[{"role":"assistant","tool_calls":[{"id":"c","type":"custom","function":{"name":"f","arguments":"{}"}}]}]`, "messages[0].tool_calls[0].type"},
		{"call without name", `[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]`, "messages[0].tool_calls[0].function.name"},
		{"call without arguments", `[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}]`, "messages[0].tool_calls[0].function.arguments"},
		{"second call bad", `[{"role":"assistant","tool_calls":[` + call + `,{"id":"d","type":"function","function":{"name":"","arguments":"{}"}}]}]`, "messages[0].tool_calls[1].function.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msgs []ChatMessage
			if err := json.Unmarshal([]byte(tt.messages), &msgs); err != nil {
				t.Fatal(err)
			}
			checkParam(t, CheckMessages(msgs), tt.param)
		})
	}
}

func checkParam(t *testing.T, err error, param string) {
	t.Helper()
	if param == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var pe *apierr.Error
	if !errors.As(err, &pe) || pe.Param != param {
		t.Fatalf("err = %v, want param %q", err, param)
	}
}

func TestToolConversationDecodes(t *testing.T) {
	var msgs []ChatMessage
	body := `[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":{"y":[1,2]}}}]},{"role":"tool","tool_call_id":"c1","name":"f","content":"r"}]`
	if err := json.Unmarshal([]byte(body), &msgs); err != nil || CheckMessages(msgs) != nil {
		t.Fatal(err, CheckMessages(msgs))
	}
	a, tool := msgs[0], msgs[1]
	if a.Content != "a\nb" || len(a.ToolCalls) != 2 || a.ToolCalls[0].Function.Arguments != `{"x": 1}` || a.ToolCalls[1].Function.Arguments != `{"y":[1,2]}` || a.ToolCalls[1].ID != "c2" {
		t.Fatalf("assistant %+v", a)
	}
	if !slices.Equal(a.Parts, []string{"a", "b"}) || tool.Parts != nil {
		t.Fatalf("parts %q %q", a.Parts, tool.Parts)
	}
	var null []ChatMessage
	if err := json.Unmarshal([]byte(`[{"role":"assistant","content":null},{"role":"assistant"}]`), &null); err != nil || null[0].Parts == nil || len(null[0].Parts) != 0 || null[1].Parts == nil || len(null[1].Parts) != 0 {
		t.Fatalf("null content parts %#v, %v", null, err)
	}
	if tool.ToolCallID != "c1" || tool.Name != "f" || tool.Content != "r" {
		t.Fatalf("tool %+v", tool)
	}
}

const weather = `{"type":"function","function":{"name":"get_weather","description":"d","parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"enum":["c","f"]}},"required":["z"]},"strict":true}}`

func TestParseToolsParams(t *testing.T) {
	tests := []struct {
		name, tools, choice, param, mode string
	}{
		{"no tools", ``, ``, "", ""},
		{"none without tools", ``, `"none"`, "", ""},
		{"auto without tools", ``, `"auto"`, "tool_choice", ""},
		{"default auto", weather, ``, "", ToolChoiceAuto},
		{"none", weather, `"none"`, "", ToolChoiceNone},
		{"required", weather, `"required"`, "", ToolChoiceRequired},
		{"named", weather, `{"type":"function","function":{"name":"get_weather"}}`, "", ToolChoiceFunction},
		{"named unknown", weather, `{"type":"function","function":{"name":"nope"}}`, "tool_choice.function.name", ""},
		{"named without name", weather, `{"type":"function","function":{}}`, "tool_choice.function.name", ""},
		{"named wrong type", weather, `{"type":"tool","function":{"name":"get_weather"}}`, "tool_choice.type", ""},
		{"choice unknown string", weather, `"any"`, "tool_choice", ""},
		{"choice a number", weather, `3`, "tool_choice", ""},
		{"no parameters", `{"type":"function","function":{"name":"f"}}`, `"none"`, "", ToolChoiceNone},
		{"custom tool", `{"type":"custom","custom":{"name":"f"}}`, `"none"`, "tools[0]", ""},
		{"not function type", `{"type":"retrieval","function":{"name":"f"}}`, `"none"`, "tools[0].type", ""},
		{"no function", `{"type":"function"}`, `"none"`, "tools[0].function", ""},
		{"no name", weather + `,{"type":"function","function":{"description":"x"}}`, `"none"`, "tools[1].function.name", ""},
		{"unknown function key", `{"type":"function","function":{"name":"f","returns":{}}}`, `"none"`, "tools[0]", ""},
		{"parameters an array", `{"type":"function","function":{"name":"f","parameters":[]}}`, `"none"`, "tools[0].function.parameters", ""},
		{"parameters type string", `{"type":"function","function":{"name":"f","parameters":{"type":"string"}}}`, `"none"`, "tools[0].function.parameters.type", ""},
		{"properties an array", `{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":[]}}}`, `"none"`, "tools[0].function.parameters.properties", ""},
		{"property a string", `{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":"string"}}}}`, `"none"`, "tools[0].function.parameters.properties.a", ""},
		{"required not strings", `{"type":"function","function":{"name":"f","parameters":{"type":"object","required":[1]}}}`, `"none"`, "tools[0].function.parameters.required", ""},
		{"description a number", `{"type":"function","function":{"name":"f","description":5}}`, `"none"`, "tools[0]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tools []json.RawMessage
			if tt.tools != "" {
				if err := json.Unmarshal([]byte("["+tt.tools+"]"), &tools); err != nil {
					t.Fatal(err)
				}
			}
			ct, err := ParseTools(tools, json.RawMessage(tt.choice), nil)
			checkParam(t, err, tt.param)
			switch {
			case tt.param != "":
			case tt.mode == "" && ct != nil:
				t.Fatalf("want no tools, got %+v", ct)
			case tt.mode != "" && (ct == nil || ct.Choice.Mode != tt.mode || !ct.Parallel):
				t.Fatalf("got %+v, want mode %q", ct, tt.mode)
			}
		})
	}
}

// "tools": [] is kept as an empty list (the template sees tools = []).
func TestParseToolsEmptyList(t *testing.T) {
	ct, err := ParseTools([]json.RawMessage{}, nil, nil)
	if err != nil || ct == nil || ct.Tools == nil || len(ct.Tools) != 0 || ct.Choice.Mode != ToolChoiceNone {
		t.Fatalf("got %+v, %v", ct, err)
	}
	if _, err := ParseTools([]json.RawMessage{}, json.RawMessage(`"required"`), nil); err == nil {
		t.Fatal("required without tools accepted")
	}
}

// The parameters keep the client's key order (they reach tojson).
func TestParseToolsKeepsSchemaOrder(t *testing.T) {
	ct, err := ParseTools([]json.RawMessage{json.RawMessage(weather)}, json.RawMessage(`"none"`), ptr(false))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ct.Tools[0].Parameters)
	if want := `{"type":"object","properties":{"z":{"type":"string"},"a":{"enum":["c","f"]}},"required":["z"]}`; string(b) != want || ct.Parallel {
		t.Fatalf("got %s parallel %v", b, ct.Parallel)
	}
	if f := ct.Tools[0]; f.Name != "get_weather" || *f.Description != "d" || !*f.Strict {
		t.Fatalf("got %+v", f)
	}
	if !strings.Contains(string(b), `"z":{"type":"string"},"a"`) {
		t.Fatal("order lost")
	}
}
