package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"govllm/internal/openai"
	"govllm/internal/output"
)

func TestCompletionNonStreaming(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	before := time.Now()
	r := do(t, srv, "POST", "/v1/completions", `{"model":"alias","prompt":"hello","max_tokens":3,"n":2,"logprobs":2,"seed":7,"temperature":0}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var resp openai.CompletionResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.ID, "cmpl-") || resp.Object != "text_completion" || resp.Model != "alias" || len(resp.Choices) != 2 {
		t.Fatalf("response %+v", resp)
	}
	for i, c := range resp.Choices {
		want := f.tok.Decode([]int32{int32(258 + i), int32(259 + i), int32(260 + i)}, false)
		if c.Index != i || c.Text != want || c.FinishReason == nil || *c.FinishReason != "length" {
			t.Fatalf("choice %d: %+v, want text %q", i, c, want)
		}
		lp := c.Logprobs
		if lp == nil || len(lp.Tokens) != 3 || len(lp.TopLogprobs[0]) != 2 || lp.TextOffset[0] != 0 || lp.TextOffset[1] != len(lp.Tokens[0]) {
			t.Fatalf("logprobs %+v", lp)
		}
	}
	if u := resp.Usage; u == nil || u.PromptTokens != 6 || u.CompletionTokens != 6 || u.TotalTokens != 12 {
		t.Fatalf("usage %+v (prompt is BOS + 5 bytes)", resp.Usage)
	}
	req := f.lastRequest()
	if req.OutputKind != output.FinalOnly || req.Params.N != 2 || *req.Params.Seed != 7 || req.ID != resp.ID ||
		req.ArrivalTime.Before(before) || req.ArrivalTime.After(time.Now()) {
		t.Fatalf("engine request %+v", req)
	}
}

func TestCompletionStreaming(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	// Deltas may be merged when the reader is slower than the engine, so
	// the number of chunks is not fixed; their concatenation is.
	tests := []struct {
		name   string
		body   string
		tokens int
		usage  bool
	}{
		{"plain", `{"prompt":"hi","max_tokens":4,"stream":true}`, 4, false},
		{"n=2 with usage", `{"prompt":"hi","max_tokens":3,"n":2,"stream":true,"stream_options":{"include_usage":true}}`, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", "/v1/completions", tt.body)
			if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %q %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			events := sseEvents(t, r.body)
			texts := map[int]string{}
			var finished int
			var usage *openai.Usage
			for i, ev := range events {
				var c openai.CompletionResponse
				if err := json.Unmarshal([]byte(ev), &c); err != nil {
					t.Fatal(err)
				}
				if c.Object != "text_completion" || !strings.HasPrefix(c.ID, "cmpl-") {
					t.Fatalf("chunk %s", ev)
				}
				if c.Usage != nil {
					if i != len(events)-1 || len(c.Choices) != 0 {
						t.Fatalf("usage chunk must be last with no choices: %s", ev)
					}
					usage = c.Usage
					continue
				}
				if len(c.Choices) != 1 {
					t.Fatalf("chunk with %d choices", len(c.Choices))
				}
				texts[c.Choices[0].Index] += c.Choices[0].Text
				if c.Choices[0].FinishReason != nil {
					finished++
				}
			}
			n := 1 + strings.Count(tt.body, `"n":2`)
			for i := range n {
				ids := make([]int32, tt.tokens)
				for k := range ids {
					ids[k] = int32(258 + k + i)
				}
				if want := f.tok.Decode(ids, false); texts[i] != want {
					t.Fatalf("choice %d text %q, want %q", i, texts[i], want)
				}
			}
			if finished != n || len(texts) != n {
				t.Fatalf("%d finished, %d choices: %q", finished, len(texts), events)
			}
			if tt.usage != (usage != nil) || usage != nil && (usage.PromptTokens != 3 || usage.CompletionTokens != 6) {
				t.Fatalf("usage %+v", usage)
			}
			if f.lastRequest().OutputKind != output.Delta {
				t.Fatal("streaming must ask for deltas")
			}
		})
	}
}

func TestChat(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	body := `{"model":"test-model","messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}],"max_completion_tokens":2,"logprobs":true,"top_logprobs":1}`
	r := do(t, srv, "POST", "/v1/chat/completions", body)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") || c.Message.Role != "assistant" ||
		c.Message.Content == nil || *c.Message.Content != f.tok.Decode([]int32{258, 259}, false) || c.Logprobs == nil || len(c.Logprobs.Content) != 2 ||
		len(c.Logprobs.Content[0].TopLogprobs) != 1 || *c.FinishReason != "length" {
		t.Fatalf("response %s", r.body)
	}
	// The prompt is the default template rendered, tokenized without
	// adding a second BOS.
	want := f.tok.Encode("<s>system: S\nuser: U\nassistant:", false)
	if got := f.lastRequest().PromptTokenIDs; !equalIDs(got, want) {
		t.Fatalf("prompt ids %v, want %v", got, want)
	}

	// Streaming: role chunk first, content, usage, [DONE].
	body = `{"messages":[{"role":"user","content":"U"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`
	r = do(t, srv, "POST", "/v1/chat/completions", body)
	events := sseEvents(t, r.body)
	var text string
	for i, ev := range events {
		var ch openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(ev), &ch); err != nil || ch.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s: %v", ev, err)
		}
		switch {
		case i == 0:
			if ch.Choices[0].Delta.Role != "assistant" {
				t.Fatalf("first chunk %s", ev)
			}
		case i == len(events)-1:
			if ch.Usage == nil || len(ch.Choices) != 0 || ch.Usage.CompletionTokens != 3 {
				t.Fatalf("last chunk %s", ev)
			}
		default:
			text += *ch.Choices[0].Delta.Content
		}
	}
	if len(events) < 3 || text != f.tok.Decode([]int32{258, 259, 260}, false) {
		t.Fatalf("events %q", events)
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// leaveMidStream posts a streaming body, reads the start of the first
// chunk (flushed before the request finishes), waits until the fake has
// started generating, then drops the connection.
func leaveMidStream(t *testing.T, srv *httptest.Server, f *fakeEngine, path, body string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+path, strings.NewReader(body))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 6)
	if _, err := resp.Body.Read(buf); err != nil || string(buf) != "data: " {
		t.Fatalf("first read %q, %v", buf, err)
	}
	select {
	case <-f.started:
	case <-time.After(replyTimeout):
		t.Fatal("the engine never started generating")
	}
	cancel()
}

// A client that goes away mid-stream cancels the engine request.
func TestClientDisconnectAbortsEngineRequest(t *testing.T) {
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		t.Run(path, func(t *testing.T) {
			f := newFake()
			f.holdAfter = 2
			srv := newTestServer(t, f, nil)
			body := `{"prompt":"x","max_tokens":10,"stream":true}`
			if strings.Contains(path, "chat") {
				body = `{"messages":[{"role":"user","content":"x"}],"max_tokens":10,"stream":true}`
			}
			leaveMidStream(t, srv, f, path, body)
			select {
			case <-f.cancelled:
			case <-time.After(30 * time.Second):
				t.Fatal("engine request context was not cancelled after the client left")
			}
		})
	}
}

func TestEndpoints(t *testing.T) {
	f := newFake()
	var instrumented []string
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write([]byte("vllm:num_requests_running 0\n"))
	})
	srv := newTestServer(t, f, func(c *Config) {
		c.Metrics = metrics
		c.Instrument = func(h string, next http.Handler) http.Handler {
			instrumented = append(instrumented, h)
			return next
		}
	})
	tests := []struct {
		method, path, body string
		status             int
		contains           string
	}{
		{"GET", "/health", "", 200, ""},
		{"GET", "/ping", "", 200, ""},
		{"POST", "/ping", "", 200, ""},
		{"GET", "/version", "", 200, `{"version":"1.2.3"}`},
		{"GET", "/metrics", "", 200, "vllm:num_requests_running 0"},
		{"GET", "/v1/models", "", 200, `"id":"alias"`},
		{"POST", "/tokenize", `{"prompt":"ab"}`, 200, `{"count":3,"max_model_len":256,"tokens":[256,97,98]}`},
		{"POST", "/tokenize", `{"prompt":"ab","add_special_tokens":false,"return_token_strs":true}`, 200, `"token_strs":["a","b"]`},
		{"POST", "/tokenize", `{"messages":[{"role":"user","content":"x"}]}`, 200, `"count":19`},
		{"POST", "/detokenize", `{"tokens":[256,104,105]}`, 200, `{"prompt":"<s>hi"}`},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, tt.body)
			if r.status != tt.status || !strings.Contains(string(r.body), tt.contains) {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tt.contains != "" && tt.path != "/metrics" && r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", r.header.Get("Content-Type"))
			}
		})
	}
	for _, h := range []string{"/v1/completions", "/v1/chat/completions", "/v1/models", "/metrics", "/health", "none"} {
		if !strings.Contains(strings.Join(instrumented, " "), h) {
			t.Errorf("route %s not instrumented (got %v)", h, instrumented)
		}
	}
}

func TestDeadEngine(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	err := error(context.DeadlineExceeded)
	f.dead.Store(&err)
	if r := do(t, srv, "GET", "/health", ""); r.status != 503 {
		t.Fatalf("health %d", r.status)
	} else {
		envelope(t, r)
	}
	r := do(t, srv, "POST", "/v1/completions", `{"prompt":"a"}`)
	if r.status != 503 || f.calls.Load() != 0 {
		t.Fatalf("%d calls=%d %s", r.status, f.calls.Load(), r.body)
	}
	envelope(t, r)
}

// TestClosedEngine: a shut-down engine is 503 "shut down", not reported
// as a dead one.
func TestClosedEngine(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	f.closed.Store(true)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/health", ""}, {"POST", "/v1/completions", `{"prompt":"a"}`},
	} {
		r := do(t, srv, tc.method, tc.path, tc.body)
		if b := string(r.body); r.status != 503 || strings.Contains(b, "dead") || !strings.Contains(b, "shut") && !strings.Contains(b, "closed") {
			t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
		}
		envelope(t, r)
	}
}

func TestPanicIsA500(t *testing.T) {
	f := newFake()
	f.panicMsg = "boom"
	srv := newTestServer(t, f, nil)
	r := do(t, srv, "POST", "/v1/completions", `{"prompt":"a"}`)
	if r.status != 500 || strings.Contains(string(r.body), "boom") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	envelope(t, r)
	if r := do(t, srv, "GET", "/health", ""); r.status != 200 {
		t.Fatalf("server down after a panic: %d", r.status)
	}
}

func TestNewValidates(t *testing.T) {
	f := newFake()
	if _, err := New(Config{}, f); err == nil {
		t.Fatal("no model names accepted")
	}
	if _, err := New(Config{ServedModelNames: []string{"m"}, ChatTemplate: "{% if %}"}, f); err == nil {
		t.Fatal("broken chat template accepted")
	}
}

// An engine failure mid-stream is reported in the stream as an error
// envelope, then the stream ends with [DONE]; without streaming it is a 503.
func TestEngineFailureMidStream(t *testing.T) {
	f := newFake()
	f.failAfter = 2
	srv := newTestServer(t, f, nil)
	r := do(t, srv, "POST", "/v1/completions", `{"prompt":"x","max_tokens":5,"stream":true}`)
	events := sseEvents(t, r.body)
	var e openai.ErrorResponse
	if err := json.Unmarshal([]byte(events[len(events)-1]), &e); err != nil || e.Error.Code != 503 || e.Error.Type != "ServiceUnavailableError" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	r = do(t, srv, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":5}`)
	if r.status != 503 {
		t.Fatalf("non-streaming: %d %s", r.status, r.body)
	}
	envelope(t, r)
}

func TestChatContinueFinalMessageAndPriority(t *testing.T) {
	f := newFake()
	f.priority = true
	srv := newTestServer(t, f, nil)
	body := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Once upon"}],"continue_final_message":true,"max_tokens":1,"priority":-5}`
	if r := do(t, srv, "POST", "/v1/chat/completions", body); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	req := f.lastRequest()
	if got := f.tok.Decode(req.PromptTokenIDs, false); got != "<s>user: hi\nassistant: Once upon" || req.Priority != -5 {
		t.Fatalf("prompt %q priority %d", got, req.Priority)
	}
}

func TestCompletionEcho(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	gen := f.tok.Decode([]int32{258, 259}, false)
	tests := []struct{ name, body, want string }{
		{"text", `{"prompt":"Hi!","max_tokens":2,"echo":true}`, "Hi!" + gen},
		{"token ids", `{"prompt":[104,105],"max_tokens":2,"echo":true}`, "hi" + gen},
		{"stream", `{"prompt":"Hi!","max_tokens":2,"echo":true,"stream":true}`, "Hi!" + gen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", "/v1/completions", tt.body)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var text string
			if strings.Contains(tt.body, "stream") {
				for _, ev := range sseEvents(t, r.body) {
					var c openai.CompletionResponse
					json.Unmarshal([]byte(ev), &c)
					text += c.Choices[0].Text
				}
			} else {
				var c openai.CompletionResponse
				json.Unmarshal(r.body, &c)
				text = c.Choices[0].Text
			}
			if text != tt.want {
				t.Fatalf("text %q, want %q", text, tt.want)
			}
		})
	}
}
