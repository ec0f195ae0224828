package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"govllm/internal/openai"
	"govllm/internal/output"
)

// TestCompletionBatch: several prompts in one request become one engine
// request each ("<id>-<i>"); choice i·n + c is sequence c of prompt i;
// usage counts each prompt's tokens once and every choice's tokens.
func TestCompletionBatch(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		prompts  [][]int32 // the engine prompts expected, in order
		echo     []string  // per prompt ("" without echo)
		n, steps int
		logprobs bool
		stream   bool
		usage    bool // a final usage chunk is expected (streaming)
	}{
		{name: "texts, n=2, logprobs", body: `{"prompt":["a","bb","ccc"],"max_tokens":3,"n":2,"logprobs":1}`,
			prompts: [][]int32{{256, 97}, {256, 98, 98}, {256, 99, 99, 99}}, n: 2, steps: 3, logprobs: true},
		{name: "token arrays, echo", body: `{"prompt":[[104],[104,105],[33]],"max_tokens":2,"echo":true}`,
			prompts: [][]int32{{104}, {104, 105}, {33}}, echo: []string{"h", "hi", "!"}, n: 1, steps: 2},
		{name: "one prompt in an array keeps its id", body: `{"prompt":["abc"],"max_tokens":2}`,
			prompts: [][]int32{{256, 97, 98, 99}}, n: 1, steps: 2},
		{name: "stream texts, n=2, usage", body: `{"prompt":["a","bb"],"max_tokens":4,"n":2,"stream":true,"stream_options":{"include_usage":true}}`,
			prompts: [][]int32{{256, 97}, {256, 98, 98}}, n: 2, steps: 4, stream: true, usage: true},
		{name: "stream token arrays, echo, logprobs", body: `{"prompt":[[104,105],[33]],"max_tokens":3,"logprobs":2,"stream":true}`,
			prompts: [][]int32{{104, 105}, {33}}, n: 1, steps: 3, logprobs: true, stream: true},
		{name: "stream echo", body: `{"prompt":["Hi","yo!"],"max_tokens":2,"n":2,"echo":true,"stream":true}`,
			prompts: [][]int32{{256, 72, 105}, {256, 121, 111, 33}}, echo: []string{"Hi", "yo!"}, n: 2, steps: 2, stream: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.byPrompt, f.recordAll = true, true
			srv := newTestServer(t, f, nil)
			r := do(t, srv, "POST", "/v1/completions", tt.body)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var id string
			var choices []openai.CompletionChoice // streaming: merged per index
			var usage *openai.Usage
			if tt.stream {
				id, choices, usage = mergeCompletionStream(t, r.body)
			} else {
				var resp openai.CompletionResponse
				if err := json.Unmarshal(r.body, &resp); err != nil {
					t.Fatal(err)
				}
				id, choices, usage = resp.ID, resp.Choices, resp.Usage
			}
			total := len(tt.prompts) * tt.n
			if len(choices) != total {
				t.Fatalf("%d choices, want %d: %s", len(choices), total, r.body)
			}
			promptTokens := 0
			for pi, ids := range tt.prompts {
				promptTokens += len(ids)
				for c := range tt.n {
					idx := pi*tt.n + c
					ch := choices[idx]
					want := f.text(len(ids), c, tt.steps)
					if tt.echo != nil {
						want = tt.echo[pi] + want
					}
					if ch.Index != idx || ch.Text != want || ch.FinishReason == nil || *ch.FinishReason != "length" {
						t.Fatalf("choice %d: %+v, want text %q", idx, ch, want)
					}
					lp := ch.Logprobs
					if tt.logprobs != (lp != nil) || lp != nil && (len(lp.Tokens) != tt.steps || lp.TextOffset[0] != 0 ||
						lp.TextOffset[tt.steps-1] != len(want)-len(lp.Tokens[tt.steps-1]) || strings.Join(lp.Tokens, "") != want) {
						t.Fatalf("choice %d logprobs %+v", idx, lp)
					}
				}
			}
			wantUsage := !tt.stream || tt.usage
			if wantUsage != (usage != nil) || usage != nil && (usage.PromptTokens != promptTokens ||
				usage.CompletionTokens != total*tt.steps || usage.TotalTokens != promptTokens+total*tt.steps) {
				t.Fatalf("usage %+v, want %d prompt and %d completion tokens", usage, promptTokens, total*tt.steps)
			}
			reqs := f.requests()
			if len(reqs) != len(tt.prompts) {
				t.Fatalf("%d engine requests, want %d", len(reqs), len(tt.prompts))
			}
			seen := map[string]bool{}
			for _, req := range reqs {
				pi := 0
				if len(tt.prompts) > 1 {
					var ok bool
					pi, ok = promptIndex(id, req.ID)
					if !ok || pi >= len(tt.prompts) {
						t.Fatalf("engine request id %q, want %s-<prompt>", req.ID, id)
					}
				} else if req.ID != id {
					t.Fatalf("engine request id %q, want the response id %q", req.ID, id)
				}
				if seen[req.ID] || !equalIDs(req.PromptTokenIDs, tt.prompts[pi]) || req.Params.N != tt.n {
					t.Fatalf("engine request %+v, want prompt %v", req, tt.prompts[pi])
				}
				seen[req.ID] = true
				if tt.stream != (req.OutputKind == output.Delta) {
					t.Fatalf("output kind %v", req.OutputKind)
				}
			}
		})
	}
}

// promptIndex parses "<id>-<i>".
func promptIndex(id, engineID string) (int, bool) {
	s, ok := strings.CutPrefix(engineID, id+"-")
	if !ok || s == "" {
		return 0, false
	}
	i := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		i = 10*i + int(r-'0')
	}
	return i, true
}

// mergeCompletionStream checks a completions SSE body (every chunk carries
// one choice or is the last, usage-only chunk; each choice finishes exactly
// once, in its last chunk) and returns the id and the choices merged per
// index, ordered by index.
func mergeCompletionStream(t *testing.T, body []byte) (string, []openai.CompletionChoice, *openai.Usage) {
	t.Helper()
	events := sseEvents(t, body)
	var id string
	var usage *openai.Usage
	byIndex := map[int]*openai.CompletionChoice{}
	for i, ev := range events {
		var c openai.CompletionResponse
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatal(err)
		}
		if id == "" {
			id = c.ID
		}
		if c.ID != id || c.Object != "text_completion" {
			t.Fatalf("chunk %s (id %s)", ev, id)
		}
		if c.Usage != nil {
			if i != len(events)-1 || len(c.Choices) != 0 {
				t.Fatalf("usage chunk must be last with no choices: %s", ev)
			}
			usage = c.Usage
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("chunk with %d choices: %s", len(c.Choices), ev)
		}
		ch := c.Choices[0]
		m, ok := byIndex[ch.Index]
		if !ok {
			m = &openai.CompletionChoice{Index: ch.Index}
			byIndex[ch.Index] = m
		}
		if m.FinishReason != nil {
			t.Fatalf("chunk after choice %d finished: %s", ch.Index, ev)
		}
		m.Text += ch.Text
		m.FinishReason = ch.FinishReason
		if ch.Logprobs != nil {
			if m.Logprobs == nil {
				m.Logprobs = &openai.CompletionLogprobs{}
			}
			m.Logprobs.Tokens = append(m.Logprobs.Tokens, ch.Logprobs.Tokens...)
			m.Logprobs.TextOffset = append(m.Logprobs.TextOffset, ch.Logprobs.TextOffset...)
		}
	}
	out := make([]openai.CompletionChoice, len(byIndex))
	for i := range out {
		m, ok := byIndex[i]
		if !ok {
			t.Fatalf("choice indexes %v are not 0..%d", byIndex, len(out)-1)
		}
		out[i] = *m
	}
	return id, out, usage
}

// TestCompletionBatchRejected: one bad prompt rejects the whole request
// before any prompt reaches the engine, and the error names it.
func TestCompletionBatchRejected(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, body, param, msg string
	}{
		{"empty string", `{"prompt":["a","","c"]}`, "prompt", "invalid prompt: prompt[1]: must not be empty"},
		{"empty token array", `{"prompt":[[1],[]]}`, "prompt", "prompt[1]: must not be empty"},
		{"token out of vocabulary", `{"prompt":[[1],[2],[3,99999]]}`, "prompt", "prompt[2]: token id 99999 is out of range"},
		{"negative token", `{"prompt":[[1],[-2]]}`, "prompt", "prompt[1]: token ids must be non-negative"},
		{"prompt over context", `{"prompt":["a","b","` + long + `"]}`, "prompt", "prompt[2]: this model's maximum context length is 256 tokens"},
		{"max_tokens over context for one prompt", `{"prompt":["a","` + long[:100] + `"],"max_tokens":200}`, "max_tokens", "prompt[1]: this model's maximum context length"},
		{"max_tokens over context streaming", `{"prompt":["` + long[:100] + `","a"],"max_tokens":200,"stream":true}`, "max_tokens", "prompt[0]:"},
		{"too many prompts", `{"prompt":[` + strings.Repeat(`"a",`, openai.MaxPrompts) + `"a"]}`, "prompt", "got 257 prompts; at most 256"},
		{"mixed shapes", `{"prompt":["a",[1]]}`, "prompt", "expected a string"},
	}
	f := newFake()
	srv := newTestServer(t, f, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", "/v1/completions", tt.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			e := envelope(t, r)
			if param(e) != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("param %q message %q, want %q containing %q", param(e), e.Message, tt.param, tt.msg)
			}
		})
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("Generate called %d times by rejected batches", n)
	}
}

// TestCompletionBatchAborts: when one prompt's generation fails, the engine
// refuses one, or the client leaves, every engine request of the HTTP
// request is aborted (the fake holds its requests until their context is
// cancelled, so nothing else lets them end).
func TestCompletionBatchAborts(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		failSuffix string // the prompt whose generation fails
		rejectID   string // the prompt the engine refuses
		disconnect bool
		calls      int64
		aborted    int64
	}{
		{"one fails", `{"prompt":["a","b","c"],"max_tokens":8}`, "-1", "", false, 3, 2},
		{"one fails, streaming", `{"prompt":["a","b","c"],"max_tokens":8,"stream":true}`, "-1", "", false, 3, 2},
		{"engine refuses the third", `{"prompt":["a","b","c","d"],"max_tokens":8}`, "", "-2", false, 3, 2},
		{"client leaves mid-stream", `{"prompt":["a","b","c"],"max_tokens":8,"n":2,"stream":true}`, "", "", true, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.holdAfter = 2
			if tt.failSuffix != "" {
				f.failAfter, f.failSuffix = 1, tt.failSuffix
			}
			f.rejectID = tt.rejectID
			srv := newTestServer(t, f, nil)
			if tt.disconnect {
				leaveMidStream(t, srv, f, "/v1/completions", tt.body)
			} else {
				r := do(t, srv, "POST", "/v1/completions", tt.body)
				var e openai.ErrorResponse
				if strings.Contains(tt.body, `"stream":true`) {
					events := sseEvents(t, r.body)
					if err := json.Unmarshal([]byte(events[len(events)-1]), &e); err != nil {
						t.Fatalf("last event %q: %v", events[len(events)-1], err)
					}
				} else {
					e.Error = envelope(t, r)
				}
				if e.Error.Code != http.StatusServiceUnavailable {
					t.Fatalf("error %+v, want a 503", e.Error)
				}
			}
			waitFake(t, f)
			if f.calls.Load() != tt.calls || f.aborted.Load() != tt.aborted {
				t.Fatalf("%d engine requests, %d aborted; want %d, %d", f.calls.Load(), f.aborted.Load(), tt.calls, tt.aborted)
			}
		})
	}
}

// waitFake waits for every fake generation to end; one that never ends was
// not aborted.
func waitFake(t *testing.T, f *fakeEngine) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("engine requests still running: they were not aborted")
	}
}

// TestCompletionBatchContinuousUsage: with continuous_usage_stats each
// chunk carries the usage of its own prompt so far; the last chunk sums
// every prompt.
func TestCompletionBatchContinuousUsage(t *testing.T) {
	f := newFake()
	f.byPrompt = true
	srv := newTestServer(t, f, nil)
	body := `{"prompt":[[1],[1,2,3]],"max_tokens":3,"n":2,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`
	r := do(t, srv, "POST", "/v1/completions", body)
	events := sseEvents(t, r.body)
	promptLen := []int{1, 3}
	for i, ev := range events {
		var c openai.CompletionResponse
		if err := json.Unmarshal([]byte(ev), &c); err != nil || c.Usage == nil {
			t.Fatalf("chunk without usage %s: %v", ev, err)
		}
		if i == len(events)-1 {
			if len(c.Choices) != 0 || c.Usage.PromptTokens != 4 || c.Usage.CompletionTokens != 12 {
				t.Fatalf("last chunk %s", ev)
			}
			continue
		}
		p := c.Choices[0].Index / 2
		if c.Usage.PromptTokens != promptLen[p] || c.Usage.CompletionTokens < 1 || c.Usage.CompletionTokens > 6 {
			t.Fatalf("chunk of prompt %d: %s", p, ev)
		}
	}
}
