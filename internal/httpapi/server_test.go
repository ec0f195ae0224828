package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"govllm/internal/chattemplate"
	"govllm/internal/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const model = "test-model"

// testTemplate is chattemplate.Default plus a raise_exception switch.
const testTemplate = "{% if fail %}{{ raise_exception('asked to fail') }}{% endif %}" + chattemplate.Default

func newTestServer(t *testing.T, f *fakeEngine, mod func(*Config)) *httptest.Server {
	t.Helper()
	cfg := Config{ServedModelNames: []string{model, "alias"}, Version: "1.2.3", MaxBodyBytes: 1 << 16, ChatTemplate: testTemplate}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		srv.Close()
		f.wg.Wait()
	})
	return srv
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// replyTimeout bounds every test request: generous for a race-enabled
// build on a loaded machine, short of the suite's timeout.
const replyTimeout = time.Minute

func do(t *testing.T, srv *httptest.Server, method, path, body string, hdr ...string) reply {
	t.Helper()
	// A handler that never answers (say, an abort that no longer reaches
	// the engine) fails its test here instead of hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

// envelope decodes an error reply strictly.
func envelope(t *testing.T, r reply) openai.ErrorInfo {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json (body %s)", ct, r.body)
	}
	var e openai.ErrorResponse
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Message == "" || e.Error.Code != r.status || e.Error.Type == "" {
		t.Fatalf("bad envelope (%v): %s", err, r.body)
	}
	return e.Error
}

func param(e openai.ErrorInfo) string {
	if e.Param == nil {
		return ""
	}
	return *e.Param
}

// sseEvents parses a text/event-stream body into its data payloads and
// checks the framing: only "data: " lines, each event ended by a blank line.
func sseEvents(t *testing.T, body []byte) []string {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("event not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("unexpected SSE line %q", line)
		}
		events = append(events, data)
		expectBlank = true
	}
	if len(events) == 0 || events[len(events)-1] != "[DONE]" || expectBlank {
		t.Fatalf("stream does not end with data: [DONE] and a blank line: %q", body)
	}
	return events[:len(events)-1]
}

func TestBadRequestsNeverReachEngine(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	big := `{"prompt":"` + strings.Repeat("x", 1<<16) + `"}`
	long := `{"prompt":"` + strings.Repeat("x", 300) + `"}`
	user := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, method, path, body string
		status                   int
		param                    string
	}{
		{"empty body", "POST", "/v1/completions", ``, 400, ""},
		{"malformed json", "POST", "/v1/completions", `{"prompt":`, 400, ""},
		{"not an object", "POST", "/v1/completions", `"hi"`, 400, ""},
		{"trailing garbage", "POST", "/v1/completions", `{"prompt":"a"}x`, 400, ""},
		{"no prompt", "POST", "/v1/completions", `{"model":"test-model"}`, 400, "prompt"},
		{"empty prompt", "POST", "/v1/completions", `{"prompt":""}`, 400, "prompt"},
		{"empty token prompt", "POST", "/v1/completions", `{"prompt":[]}`, 400, "prompt"},
		{"empty prompt among several", "POST", "/v1/completions", `{"prompt":["a",""]}`, 400, "prompt"},
		{"prompt among several over context", "POST", "/v1/completions", `{"prompt":["a","` + strings.Repeat("x", 300) + `"]}`, 400, "prompt"},
		{"too many prompts", "POST", "/v1/completions", `{"prompt":[` + strings.Repeat(`"a",`, openai.MaxPrompts) + `"a"]}`, 400, "prompt"},
		{"token out of vocab", "POST", "/v1/completions", `{"prompt":[1,99999]}`, 400, "prompt"},
		{"negative token", "POST", "/v1/completions", `{"prompt":[-3]}`, 400, "prompt"},
		{"prompt wrong type", "POST", "/v1/completions", `{"prompt":true}`, 400, "prompt"},
		{"unknown model", "POST", "/v1/completions", `{"model":"gpt-5","prompt":"a"}`, 404, "model"},
		{"temperature type", "POST", "/v1/completions", `{"prompt":"a","temperature":"x"}`, 400, "temperature"},
		{"temperature negative", "POST", "/v1/completions", `{"prompt":"a","temperature":-1}`, 400, "temperature"},
		{"top_p zero", "POST", "/v1/completions", `{"prompt":"a","top_p":0}`, 400, "top_p"},
		{"top_p above one", "POST", "/v1/completions", `{"prompt":"a","top_p":1.5}`, 400, "top_p"},
		{"top_k", "POST", "/v1/completions", `{"prompt":"a","top_k":-2}`, 400, "top_k"},
		{"min_p", "POST", "/v1/completions", `{"prompt":"a","min_p":2}`, 400, "min_p"},
		{"presence_penalty", "POST", "/v1/completions", `{"prompt":"a","presence_penalty":3}`, 400, "presence_penalty"},
		{"frequency_penalty", "POST", "/v1/completions", `{"prompt":"a","frequency_penalty":-3}`, 400, "frequency_penalty"},
		{"repetition_penalty", "POST", "/v1/completions", `{"prompt":"a","repetition_penalty":0}`, 400, "repetition_penalty"},
		{"n zero", "POST", "/v1/completions", `{"prompt":"a","n":0}`, 400, "n"},
		{"n float", "POST", "/v1/completions", `{"prompt":"a","n":2.5}`, 400, "n"},
		{"max_tokens zero", "POST", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "max_tokens"},
		{"max_tokens over context", "POST", "/v1/completions", `{"prompt":"a","max_tokens":1000}`, 400, "max_tokens"},
		{"prompt over context", "POST", "/v1/completions", long, 400, "prompt"},
		{"min_tokens over max", "POST", "/v1/completions", `{"prompt":"a","max_tokens":2,"min_tokens":5}`, 400, "min_tokens"},
		{"logprobs too many", "POST", "/v1/completions", `{"prompt":"a","logprobs":21}`, 400, "logprobs"},
		{"empty stop string", "POST", "/v1/completions", `{"prompt":"a","stop":[""]}`, 400, "stop"},
		{"stop wrong type", "POST", "/v1/completions", `{"prompt":"a","stop":{"x":1}}`, 400, "stop"},
		{"stop_token_ids out of vocab", "POST", "/v1/completions", `{"prompt":"a","stop_token_ids":[100000]}`, 400, "stop_token_ids"},
		{"prompt_logprobs on a stream", "POST", "/v1/completions", `{"prompt":"a","prompt_logprobs":1,"stream":true}`, 400, "prompt_logprobs"},
		{"prompt_logprobs beyond the cap", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"prompt_logprobs":21}`, 400, "prompt_logprobs"},
		{"max_tokens 0 without echo", "POST", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "max_tokens"},
		{"logit_bias key not a token id", "POST", "/v1/completions", `{"prompt":"a","logit_bias":{"a":1}}`, 400, "logit_bias"},
		{"logit_bias above 100", "POST", "/v1/completions", `{"prompt":"a","logit_bias":{"3":101}}`, 400, "logit_bias"},
		{"logit_bias out of the vocabulary", "POST", "/v1/completions", `{"prompt":"a","logit_bias":{"99999":1}}`, 400, "logit_bias"},
		{"allowed_token_ids empty", "POST", "/v1/completions", `{"prompt":"a","allowed_token_ids":[]}`, 400, "allowed_token_ids"},
		{"best_of", "POST", "/v1/completions", `{"prompt":"a","best_of":3}`, 400, "best_of"},
		{"priority under fcfs", "POST", "/v1/completions", `{"prompt":"a","priority":-1}`, 400, "priority"},
		{"chat continue without assistant", "POST", "/v1/chat/completions", `{` + user + `,"continue_final_message":true}`, 400, "continue_final_message"},
		{"chat template raises", "POST", "/v1/chat/completions", `{"messages":[{"role":"assistant","content":"a"}],"chat_template_kwargs":{"fail":true}}`, 400, "messages"},
		{"stream_options without stream", "POST", "/v1/completions", `{"prompt":"a","stream_options":{"include_usage":true}}`, 400, "stream_options"},
		{"body too large", "POST", "/v1/completions", big, 413, ""},
		{"chat no messages", "POST", "/v1/chat/completions", `{"messages":[]}`, 400, "messages"},
		{"chat messages wrong type", "POST", "/v1/chat/completions", `{"messages":"hi"}`, 400, "messages"},
		{"chat bad role", "POST", "/v1/chat/completions", `{"messages":[{"role":"wizard","content":"hi"}]}`, 400, "messages[0].role"},
		{"chat image part", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 400, "messages[0].content[0].type"},
		{"chat unknown model", "POST", "/v1/chat/completions", `{"model":"nope",` + user + `}`, 404, "model"},
		{"chat top_logprobs without logprobs", "POST", "/v1/chat/completions", `{` + user + `,"top_logprobs":3}`, 400, "top_logprobs"},
		{"chat tools", "POST", "/v1/chat/completions", `{` + user + `,"tools":[{"type":"function"}]}`, 400, "tools[0].function"},
		{"chat max_completion_tokens over context", "POST", "/v1/chat/completions", `{` + user + `,"max_completion_tokens":100000}`, 400, "max_tokens"},
		{"chat seed type", "POST", "/v1/chat/completions", `{` + user + `,"seed":"abc"}`, 400, "seed"},
		{"chat malformed", "POST", "/v1/chat/completions", `{"messages":[}`, 400, ""},
		{"wrong method completions", "GET", "/v1/completions", ``, 405, ""},
		{"wrong method models", "POST", "/v1/models", `{}`, 405, ""},
		{"unknown route", "GET", "/v1/nothing", ``, 404, ""},
		{"unknown root route", "POST", "/generate", `{}`, 404, ""},
		{"tokenize unknown model", "POST", "/tokenize", `{"model":"x","prompt":"a"}`, 404, "model"},
		{"tokenize nothing", "POST", "/tokenize", `{}`, 400, "prompt"},
		{"detokenize out of vocab", "POST", "/detokenize", `{"tokens":[70000]}`, 400, "tokens"},
		{"detokenize wrong type", "POST", "/detokenize", `{"tokens":"abc"}`, 400, "tokens"},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, tt.body, "Content-Type", "application/json")
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			e := envelope(t, r)
			if param(e) != tt.param {
				t.Fatalf("param %q, want %q: %s", param(e), tt.param, r.body)
			}
			if tt.status == 405 && r.header.Get("Allow") == "" {
				t.Fatal("405 without Allow header")
			}
		})
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("engine Generate called %d times by bad requests", n)
	}
	// The server still works afterwards.
	if r := do(t, srv, "POST", "/v1/completions", `{"prompt":"a","max_tokens":2}`); r.status != 200 {
		t.Fatalf("good request after bad ones: %d %s", r.status, r.body)
	}
}

func TestAuth(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, func(c *Config) { c.APIKey = "sekrit" })
	body := `{"prompt":"a","max_tokens":1}`
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
	}{
		{"missing", "POST", "/v1/completions", body, nil, 401},
		{"wrong key", "POST", "/v1/completions", body, []string{"Authorization", "Bearer nope"}, 401},
		{"prefix of key", "POST", "/v1/completions", body, []string{"Authorization", "Bearer sekri"}, 401},
		{"no bearer scheme", "POST", "/v1/completions", body, []string{"Authorization", "sekrit"}, 401},
		{"basic scheme", "POST", "/v1/completions", body, []string{"Authorization", "Basic sekrit"}, 401},
		{"models needs key", "GET", "/v1/models", "", nil, 401},
		{"chat needs key", "POST", "/v1/chat/completions", `{}`, nil, 401},
		{"right key", "POST", "/v1/completions", body, []string{"Authorization", "Bearer sekrit"}, 200},
		{"lower-case scheme", "POST", "/v1/completions", body, []string{"Authorization", "bearer sekrit"}, 200},
		{"empty bearer", "POST", "/v1/completions", body, []string{"Authorization", "Bearer "}, 401},
		{"models with key", "GET", "/v1/models", "", []string{"Authorization", "Bearer sekrit"}, 200},
		{"health is open", "GET", "/health", "", nil, 200},
		{"version is open", "GET", "/version", "", nil, 200},
		{"tokenize is open", "POST", "/tokenize", `{"prompt":"a"}`, nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, tt.body, tt.hdr...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 401 {
				envelope(t, r)
			}
		})
	}
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("Generate called %d times, want 2", n)
	}
}
