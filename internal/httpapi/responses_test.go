package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// responsesTool is weatherTool in the Responses API's flat shape.
const responsesTool = `{"type":"function","name":"get_weather","description":"Météo ☀","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["location"]}}`

// responsesHistory is toolHistory as Responses API input items.
const responsesHistory = `[{"role":"user","content":[{"type":"input_text","text":"Weather in Paris?"},{"type":"input_text","text":"And Oslo?"}]},` +
	`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"location\": \"Paris\", \"unit\": \"c\"}"},` +
	`{"type":"function_call","call_id":"call_2","name":"get_weather","arguments":"{\"location\": \"Oslo\"}","id":"fc_2","status":"completed"},` +
	`{"type":"function_call_output","call_id":"call_1","output":"18 C"},` +
	`{"type":"function_call_output","call_id":"call_2","output":"-3 C"}]`

// The input items render as the chat messages they stand for (the same
// Qwen2.5 fragments as the chat form of the history, written from the
// template's text), with the flat tools and the instructions as the
// system message.
func TestResponsesInputRendersAsChat(t *testing.T) {
	f := newFake()
	srv := qwenServer(t, f)
	r := do(t, srv, "POST", "/v1/responses", `{"max_output_tokens":2,"instructions":"Be brief.","tool_choice":"none","tools":[`+responsesTool+`],"input":`+responsesHistory+`}`)
	ok(t, r)
	p := promptText(f)
	for _, want := range []string{
		"<|im_start|>system\nBe brief.\n\n# Tools",
		"<|im_start|>user\nWeather in Paris?\nAnd Oslo?<|im_end|>",
		`{"type": "function", "function": {"name": "get_weather", "description": "Météo ☀", "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["location"]}}}`,
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Oslo\"}}\n</tool_call><|im_end|>",
		"<|im_start|>user\n<tool_response>\n18 C\n</tool_response>\n<tool_response>\n-3 C\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("rendered prompt lacks %q:\n%s", want, p)
		}
	}
}

// previous_response_id puts the stored conversation (its input and its
// output as an assistant message) before the new input; the earlier
// instructions do not carry over (OpenAI's rule, vLLM's too).
func TestResponsesPreviousResponse(t *testing.T) {
	f := newFake()
	srv := qwenServer(t, f)
	first := ok(t, do(t, srv, "POST", "/v1/responses", `{"max_output_tokens":3,"instructions":"First rules.","input":"Hello"}`))
	answer := first["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	second := ok(t, do(t, srv, "POST", "/v1/responses", `{"max_output_tokens":2,"previous_response_id":"`+first["id"].(string)+`","input":[{"role":"user","content":"Again"}]}`))
	p := promptText(f)
	want := "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n" + answer + "<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n"
	if !strings.HasSuffix(p, want) || strings.Contains(p, "First rules.") {
		t.Fatalf("prompt %q, want it to end with %q and not hold the first instructions", p, want)
	}
	if second["previous_response_id"] != first["id"] {
		t.Fatalf("previous_response_id echo %v", second["previous_response_id"])
	}
	got := ok(t, do(t, srv, "GET", "/v1/responses/"+first["id"].(string), ""))
	if got["id"] != first["id"] || got["status"] != "incomplete" {
		t.Fatalf("GET %v", got)
	}
	// vLLM's replay of a background response's events is not supported.
	r := do(t, srv, "GET", "/v1/responses/"+first["id"].(string)+"?stream=true&starting_after=2", "")
	if e := envelope(t, r); r.status != http.StatusBadRequest || param(e) != "starting_after" {
		t.Fatalf("GET with stream: %d %s", r.status, r.body)
	}
}

// The store keeps the last --responses-store-size responses, least
// recently used evicted first; 0 keeps none.
func TestResponseStoreLRU(t *testing.T) {
	st := newResponseStore(2)
	for _, id := range []string{"a", "b"} {
		st.put(id, &storedResponse{})
	}
	st.get("a") // b is now the least recently used
	st.put("c", &storedResponse{})
	if st.get("a") == nil || st.get("b") != nil || st.get("c") == nil {
		t.Fatal("want a and c kept, b evicted")
	}
	none := newResponseStore(-1)
	none.put("a", &storedResponse{})
	if none.get("a") != nil {
		t.Fatal("a store of size < 0 keeps nothing")
	}
}

func TestResponsesRefused(t *testing.T) {
	tools := `"tools":[` + responsesTool + `]`
	tests := []struct{ name, path, body, param string }{
		{"no input", "/v1/responses", `{}`, "input"},
		{"empty input", "/v1/responses", `{"input":[]}`, "input"},
		{"unknown field", "/v1/responses", `{"input":"x","n":2}`, "n"},
		{"background", "/v1/responses", `{"input":"x","background":true}`, "background"},
		{"include", "/v1/responses", `{"input":"x","include":["reasoning.encrypted_content"]}`, "include"},
		{"prompt", "/v1/responses", `{"input":"x","prompt":{"id":"p"}}`, "prompt"},
		{"prompt_cache_key", "/v1/responses", `{"input":"x","prompt_cache_key":"k"}`, "prompt_cache_key"},
		{"service tier", "/v1/responses", `{"input":"x","service_tier":"flex"}`, "service_tier"},
		{"truncation", "/v1/responses", `{"input":"x","truncation":"auto"}`, "truncation"},
		{"top_logprobs", "/v1/responses", `{"input":"x","top_logprobs":2}`, "top_logprobs"},
		{"max_output_tokens", "/v1/responses", `{"input":"x","max_output_tokens":0}`, "max_output_tokens"},
		{"reasoning effort", "/v1/responses", `{"input":"x","reasoning":{"effort":"max"}}`, "reasoning.effort"},
		{"verbosity", "/v1/responses", `{"input":"x","text":{"verbosity":"low"}}`, "text.verbosity"},
		{"format type", "/v1/responses", `{"input":"x","text":{"format":{"type":"yaml"}}}`, "text.format.type"},
		{"format and structured_outputs", "/v1/responses", `{"input":"x","text":{"format":{"type":"json_object"}},"structured_outputs":{"regex":"a"}}`, "structured_outputs"},
		{"hosted tool", "/v1/responses", `{"input":"x","tools":[{"type":"file_search"}]}`, "tools[0].type"},
		{"tool without name", "/v1/responses", `{"input":"x","tools":[{"type":"function"}]}`, "tools[0].name"},
		{"named unknown", "/v1/responses", `{"input":"x",` + tools + `,"tool_choice":{"type":"function","name":"nope"}}`, "tool_choice.name"},
		{"hosted tool choice", "/v1/responses", `{"input":"x",` + tools + `,"tool_choice":{"type":"web_search_preview"}}`, "tool_choice.type"},
		{"required without tools", "/v1/responses", `{"input":"x","tool_choice":"required"}`, "tool_choice"},
		{"auto without a parser", "/v1/responses", `{"input":"x",` + tools + `}`, "tool_choice"},
		{"item type", "/v1/responses", `{"input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0].type"},
		{"item role", "/v1/responses", `{"input":[{"role":"tool","content":"x"}]}`, "input[0].role"},
		{"item part", "/v1/responses", `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"u"}]}]}`, "input[0].content[0].type"},
		{"call without id", "/v1/responses", `{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id"},
		{"output without output", "/v1/responses", `{"input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output"},
		{"field of another item", "/v1/responses", `{"input":[{"role":"user","content":"x","call_id":"c"}]}`, "input[0].call_id"},
		{"unknown previous", "/v1/responses", `{"input":"x","previous_response_id":"resp_1"}`, "previous_response_id"},
		{"GET bad id", "/v1/responses/abc", ``, "response_id"},
		{"GET unknown", "/v1/responses/resp_abc", ``, "response_id"},
	}
	srv := newTestServer(t, newFake(), nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := "POST"
			if tc.body == "" {
				method = "GET"
			}
			r := do(t, srv, method, tc.path, tc.body)
			var env struct {
				Error struct{ Param *string } `json:"error"`
			}
			json.Unmarshal(r.body, &env)
			if r.status/100 != 4 || env.Error.Param == nil || *env.Error.Param != tc.param {
				t.Fatalf("status %d %s, want a 4xx naming %s", r.status, r.body, tc.param)
			}
		})
	}
	if r := do(t, srv, "POST", "/v1/responses", `{"input":"x","previous_response_id":"resp_1"}`); r.status != http.StatusNotFound {
		t.Fatalf("unknown previous_response_id: status %d, want 404", r.status)
	}
}

// Without a store (--responses-store-size 0) a response says "store":
// false and cannot be continued or retrieved.
func TestResponsesWithoutStore(t *testing.T) {
	srv := newTestServer(t, newFake(), func(c *Config) { c.ResponsesStoreSize = -1 })
	r := ok(t, do(t, srv, "POST", "/v1/responses", `{"max_output_tokens":1,"input":"Hi"}`))
	if r["store"] != false {
		t.Fatalf("store %v, want false", r["store"])
	}
	id := r["id"].(string)
	if got := do(t, srv, "GET", "/v1/responses/"+id, ""); got.status != http.StatusNotFound {
		t.Fatalf("GET: status %d, want 404", got.status)
	}
	if got := do(t, srv, "POST", "/v1/responses", `{"input":"x","previous_response_id":"`+id+`"}`); got.status != http.StatusNotFound {
		t.Fatalf("previous_response_id: status %d, want 404", got.status)
	}
}

// An engine failure mid-stream ends the stream with an error event and
// response.failed (status failed, its error set), after the events so far;
// without streaming it is a 503.
func TestResponsesEngineFailureMidStream(t *testing.T) {
	f := newFake()
	f.failAfter = 2
	srv := newTestServer(t, f, nil)
	r := do(t, srv, "POST", "/v1/responses", `{"input":"x","max_output_tokens":5,"stream":true}`)
	var types []string
	var last struct {
		Type     string `json:"type"`
		Response struct {
			Status string `json:"status"`
			Error  *struct{ Code, Message string }
		} `json:"response"`
	}
	for _, ev := range strings.Split(strings.TrimSpace(string(r.body)), "\n\n") {
		name, data, _ := strings.Cut(ev, "\ndata: ")
		types = append(types, strings.TrimPrefix(name, "event: "))
		if err := json.Unmarshal([]byte(data), &last); err != nil || last.Type != types[len(types)-1] {
			t.Fatalf("event %q: %v", ev, err)
		}
	}
	n := len(types)
	if n < 4 || types[0] != "response.created" || types[n-2] != "error" || types[n-1] != "response.failed" ||
		last.Response.Status != "failed" || last.Response.Error == nil || last.Response.Error.Code != "server_error" {
		t.Fatalf("events %v, last %+v", types, last)
	}
	if r := do(t, srv, "POST", "/v1/responses", `{"input":"x","max_output_tokens":5}`); r.status != http.StatusServiceUnavailable {
		t.Fatalf("non-streaming: %d %s", r.status, r.body)
	}
}

// sseTyped splits a Responses API stream into its events' types and data.
func sseTyped(t *testing.T, body []byte) (types []string, data []map[string]any) {
	t.Helper()
	for _, ev := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		name, raw, _ := strings.Cut(ev, "\ndata: ")
		var d map[string]any
		if err := json.Unmarshal([]byte(raw), &d); err != nil || "event: "+d["type"].(string) != name {
			t.Fatalf("event %q: %v", ev, err)
		}
		types, data = append(types, d["type"].(string)), append(data, d)
	}
	return types, data
}

// A named function's arguments stream as function_call_arguments deltas
// of one function_call item (the fake engine's words stand for them: it
// does not apply the constraint; the stream may coalesce them); the deltas concatenate to the done
// event's arguments and to the item's.
func TestResponsesNamedFunctionStream(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	r := do(t, srv, "POST", "/v1/responses", `{"input":"x","max_output_tokens":4,"stream":true,"tools":[`+responsesTool+`],"tool_choice":{"type":"function","name":"get_weather"}}`)
	types, data := sseTyped(t, r.body)
	var args strings.Builder
	var collapsed []string
	for i, typ := range types {
		if typ == "response.function_call_arguments.delta" {
			args.WriteString(data[i]["delta"].(string))
		}
		if len(collapsed) == 0 || collapsed[len(collapsed)-1] != typ {
			collapsed = append(collapsed, typ)
		}
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.incomplete"}
	if strings.Join(collapsed, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", types, want)
	}
	item := data[len(data)-2]["item"].(map[string]any)
	done := data[len(data)-3]
	if item["type"] != "function_call" || item["name"] != "get_weather" || item["arguments"] != args.String() || done["arguments"] != args.String() ||
		args.String() != f.text(0, 0, 4) {
		t.Fatalf("item %v, done %v, deltas %q, want the output %q", item, done, args.String(), f.text(0, 0, 4))
	}
}
