package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"govllm/internal/testmodels"
)

// qwenTemplate is Qwen2.5-7B-Instruct's chat template, which renders tools
// and tool history (the expected fragments below are written from its
// text: tools as JSON lines in <tools>, calls as <tool_call> JSON with
// name then arguments, results as <tool_response> in a user turn).
func qwenServer(t *testing.T, f *fakeEngine) *httptest.Server {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testmodels.Shared(t, "templates"), "Qwen-Qwen2.5-7B-Instruct.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	f.maxLen = 1 << 14
	return newTestServer(t, f, func(c *Config) { c.ChatTemplate = string(b) })
}

const (
	weatherTool = `{"type":"function","function":{"name":"get_weather","description":"Météo ☀","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["location"]}}}`
	toolHistory = `[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"},{"type":"text","text":"And Oslo?"}]},` +
		`{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Paris\", \"unit\": \"c\"}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Oslo\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","name":"get_weather","content":"18 C"},` +
		`{"role":"tool","tool_call_id":"call_2","name":"get_weather","content":"-3 C"}]`
)

// The tool history (calls and results) and the tools reach the prompt;
// /tokenize shows it (vLLM's chat form of /tokenize).
func TestTokenizeChatFormRendersToolHistory(t *testing.T) {
	f := newFake()
	srv := qwenServer(t, f)
	r := do(t, srv, "POST", "/tokenize", `{"messages":`+toolHistory+`,"tools":[`+weatherTool+`]}`)
	text := tokenizeText(t, f, r)
	for _, want := range []string{
		"<|im_start|>user\nWeather in Paris?\nAnd Oslo?<|im_end|>",
		`{"type": "function", "function": {"name": "get_weather", "description": "Météo ☀", "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["location"]}}}`,
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Oslo\"}}\n</tool_call><|im_end|>",
		"<|im_start|>user\n<tool_response>\n18 C\n</tool_response>\n<tool_response>\n-3 C\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered prompt lacks %q:\n%s", want, text)
		}
	}
	// Without tools the template's plain system prompt is used, and the
	// history is still there.
	r = do(t, srv, "POST", "/tokenize", `{"messages":`+toolHistory+`,"add_generation_prompt":false}`)
	text = tokenizeText(t, f, r)
	if strings.Contains(text, "<tools>") || !strings.Contains(text, "<tool_response>\n-3 C\n</tool_response><|im_end|>\n") || strings.HasSuffix(text, "<|im_start|>assistant\n") {
		t.Errorf("without tools:\n%s", text)
	}
}

// tokenizeText checks a /tokenize reply's shape and decodes its tokens.
func tokenizeText(t *testing.T, f *fakeEngine, r reply) string {
	t.Helper()
	var resp struct {
		Count       int     `json:"count"`
		MaxModelLen int     `json:"max_model_len"`
		Tokens      []int32 `json:"tokens"`
	}
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &resp); err != nil || resp.Count != len(resp.Tokens) || resp.MaxModelLen != f.maxLen {
		t.Fatalf("reply %s: %v", r.body, err)
	}
	return f.tok.Decode(resp.Tokens, false)
}

// tool_choice "none" renders the tools and answers plain content.
func TestChatToolChoiceNoneRendersTools(t *testing.T) {
	f := newFake()
	srv := qwenServer(t, f)
	r := do(t, srv, "POST", "/v1/chat/completions", `{"max_tokens":2,"tool_choice":"none","parallel_tool_calls":false,"tools":[`+weatherTool+`],"messages":`+toolHistory+`}`)
	body := ok(t, r)
	msg := body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if _, has := msg["tool_calls"]; has || msg["content"] == nil {
		t.Fatalf("message %v", msg)
	}
	if p := promptText(f); !strings.Contains(p, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"") || !strings.Contains(p, "<tool_response>\n18 C\n</tool_response>") {
		t.Fatalf("prompt %q", p)
	}
}

func TestToolRequestsRefused(t *testing.T) {
	tools := `"tools":[` + weatherTool + `]`
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct{ name, path, body, param string }{
		{"auto", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":"auto"}`, "tool_choice"},
		{"default auto", "/v1/chat/completions", `{` + msgs + `,` + tools + `}`, "tool_choice"},
		{"required beside response_format", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":"required","response_format":{"type":"json_object"}}`, "tool_choice"},
		{"named beside guided_json", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":{"type":"function","function":{"name":"get_weather"}},"guided_json":{"type":"object"}}`, "tool_choice"},
		{"named not in tools", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":{"type":"function","function":{"name":"nope"}}}`, "tool_choice.function.name"},
		{"bad parameters", "/v1/chat/completions", `{` + msgs + `,"tool_choice":"none","tools":[` + weatherTool + `,{"type":"function","function":{"name":"g","parameters":"object"}}]}`, "tools[1].function.parameters"},
		{"image part", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]}`, "messages[2].content[0].type"},
		{"tool without id", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"},{"role":"tool","content":"r"}]}`, "messages[1].tool_call_id"},
		{"kwargs not an object", "/v1/chat/completions", `{` + msgs + `,"chat_template_kwargs":[1]}`, "chat_template_kwargs"},
		{"kwargs replace tools", "/v1/chat/completions", `{` + msgs + `,"chat_template_kwargs":{"tools":[]}}`, "chat_template_kwargs.tools"},
		{"tokenize bad call", "/tokenize", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"tokenize bad tools", "/tokenize", `{` + msgs + `,"tools":[{"type":"custom"}]}`, "tools[0].type"},
		{"tokenize both prompts", "/tokenize", `{"prompt":"a",` + msgs + `}`, "messages"},
		{"tokenize tools on prompt", "/tokenize", `{"prompt":"a",` + tools + `}`, "prompt"},
		{"tokenize continue and gen", "/tokenize", `{"messages":[{"role":"assistant","content":"a"}],"continue_final_message":true,"add_generation_prompt":true}`, "continue_final_message"},
		{"tokenize unknown field", "/tokenize", `{` + msgs + `,"tool_choice":"none"}`, "tool_choice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			srv := newTestServer(t, f, nil)
			r := do(t, srv, "POST", tt.path, tt.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			e := envelope(t, r)
			if param(e) != tt.param {
				t.Fatalf("param %q, want %q (%s)", param(e), tt.param, e.Message)
			}
			if tt.param == "tool_choice" && strings.HasPrefix(tt.name, "auto") && !strings.Contains(e.Message, "--enable-auto-tool-choice and --tool-call-parser") {
				t.Fatalf("message %q", e.Message)
			}
			if f.calls.Load() != 0 {
				t.Fatal("a refused request reached the engine")
			}
		})
	}
}

// continue_final_message and add_special_tokens in the chat form of
// /tokenize (add_special_tokens defaults to false there, as in vLLM).
func TestTokenizeChatFlags(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	r := do(t, srv, "POST", "/tokenize", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Once"}],"continue_final_message":true}`)
	if text := tokenizeText(t, f, r); !strings.HasSuffix(text, "assistant: Once") {
		t.Fatalf("continue_final_message: %q", text)
	}
	plain := do(t, srv, "POST", "/tokenize", `{"messages":[{"role":"user","content":"hi"}]}`)
	special := do(t, srv, "POST", "/tokenize", `{"messages":[{"role":"user","content":"hi"}],"add_special_tokens":true}`)
	var a, b struct{ Tokens []int32 }
	if json.Unmarshal(plain.body, &a) != nil || json.Unmarshal(special.body, &b) != nil || len(b.Tokens) != len(a.Tokens)+1 || b.Tokens[0] != f.tok.BOS() {
		t.Fatalf("add_special_tokens: %s vs %s", plain.body, special.body)
	}
}

// A template that loops over message content gets the parts as a list
// (vLLM's "openai" content format): Mistral Small 3.2 prints each text
// block with nothing between them, where a joined string would have "\n".
func TestContentPartsReachListTemplates(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testmodels.Shared(t, "templates"), "Mistral-Small-3.2-24B-Instruct-2506.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.maxLen = 1 << 14
	srv := newTestServer(t, f, func(c *Config) { c.ChatTemplate = string(b) })
	r := do(t, srv, "POST", "/tokenize", `{"messages":[{"role":"user","content":[{"type":"text","text":"Part one."},{"type":"text","text":"Part two."}]}]}`)
	if text := tokenizeText(t, f, r); !strings.Contains(text, "[INST]Part one.Part two.[/INST]") {
		t.Fatalf("rendered %q", text)
	}
	// "tools": [] is an empty list to the template (Python: not none).
	r = do(t, srv, "POST", "/tokenize", `{"tools":[],"messages":[{"role":"user","content":"Hi"}]}`)
	if text := tokenizeText(t, f, r); !strings.Contains(text, "[AVAILABLE_TOOLS][][/AVAILABLE_TOOLS][INST]Hi[/INST]") {
		t.Fatalf("empty tools %q", text)
	}
	// continue_final_message cuts after the last part, as transformers does
	// for list content.
	r = do(t, srv, "POST", "/tokenize", `{"continue_final_message":true,"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":[{"type":"text","text":"Once"},{"type":"text","text":" upon"}]}]}`)
	if text := tokenizeText(t, f, r); !strings.HasSuffix(text, "[/INST]Once upon") {
		t.Fatalf("continued %q", text)
	}
}

// An assistant message's reasoning_content (or reasoning) reaches the
// template: Qwen3's renders it back in a think block for the turns after
// the last user query (the expected text is written from its template).
func TestReasoningHistoryReachesTemplate(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testmodels.Shared(t, "templates"), "Qwen-Qwen3-0.6B.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.maxLen = 1 << 14
	srv := newTestServer(t, f, func(c *Config) { c.ChatTemplate = string(b) })
	for _, field := range []string{"reasoning_content", "reasoning"} {
		msgs := `[{"role":"user","content":"Weather in Paris?"},` +
			`{"role":"assistant","content":"","` + field + `":"I need the tool.","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Paris\"}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"18 C"}]`
		text := tokenizeText(t, f, do(t, srv, "POST", "/tokenize", `{"messages":`+msgs+`}`))
		if want := "<|im_start|>assistant\n<think>\nI need the tool.\n</think>\n\n<tool_call>\n"; !strings.Contains(text, want) {
			t.Errorf("%s: rendered prompt lacks %q:\n%s", field, want, text)
		}
	}
	r := do(t, srv, "POST", "/tokenize", `{"messages":[{"role":"user","content":"a","reasoning_content":"b"}]}`)
	if r.status != http.StatusBadRequest || param(envelope(t, r)) != "messages[0].reasoning_content" {
		t.Fatalf("reasoning on a user message: %d %s", r.status, r.body)
	}
}

// With tool_choice "auto" a strict tool is refused (its arguments would
// be parsed, not constrained); "required" enforces the schema, so strict
// is honoured there.
func TestStrictToolUnderAutoRefused(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, func(c *Config) { c.EnableAutoToolChoice, c.ToolCallParser = true, "hermes" })
	strict := `{"type":"function","function":{"name":"g","parameters":{"type":"object"},"strict":true}}`
	msgs := `"messages":[{"role":"user","content":"hi"}],"max_tokens":2`
	r := do(t, srv, "POST", "/v1/chat/completions", `{`+msgs+`,"tools":[`+weatherTool+`,`+strict+`],"tool_choice":"auto"}`)
	if r.status != http.StatusBadRequest || param(envelope(t, r)) != "tools[1].function.strict" {
		t.Fatalf("auto with a strict tool: %d %s", r.status, r.body)
	}
	if f.calls.Load() != 0 {
		t.Fatal("a refused request reached the engine")
	}
	r = do(t, srv, "POST", "/v1/chat/completions", `{`+msgs+`,"tools":[`+strict+`],"tool_choice":"required"}`)
	if r.status != http.StatusOK {
		t.Fatalf("required with a strict tool: %d %s", r.status, r.body)
	}
}
