package httpapi

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"govllm/internal/core"
	"govllm/internal/kvcache"
	"govllm/internal/llm"
	gomodel "govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sched"
	"govllm/internal/stats"
	"govllm/internal/tensor"
	"govllm/internal/tokenizer"
)

// countingLogger counts what reaches the engine's stat loggers.
type countingLogger struct {
	mu               sync.Mutex
	promptTokens     int
	finishedRequests int
}

func (c *countingLogger) Record(_ *stats.SchedulerStats, it *stats.IterationStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.promptTokens += it.NumPromptTokens()
	c.finishedRequests += len(it.FinishedRequests)
}

func (c *countingLogger) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.promptTokens, c.finishedRequests
}

// newRealEngine is the real stack under the server: the built-in random
// model, the CPU runner, the engine core and llm.AsyncEngine.
func newRealEngine(t *testing.T, loggers ...llm.StatLogger) *llm.AsyncEngine {
	t.Helper()
	mc, err := gomodel.DummyConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	const maxLen, blockSize, blocks = 256, 16, 128
	m := gomodel.NewDummy(mc, tensor.F32, 1)
	tok := tokenizer.NewDummy(mc.VocabSize)
	run, err := runner.New(m, nil, runner.Config{NumBlocks: blocks, BlockSize: blockSize, MaxNumBatchedTokens: 256, MaxNumSeqs: 8, EOSTokenID: tok.EOS()})
	if err != nil {
		t.Fatal(err)
	}
	sc := sched.DefaultConfig()
	sc.MaxModelLen, sc.MaxNumSeqs, sc.MaxNumBatchedTokens = maxLen, 8, 256
	c, err := core.New(core.Config{Sched: sc, KV: kvcache.Config{NumBlocks: blocks, BlockSize: blockSize, EnablePrefixCaching: true}}, run)
	if err != nil {
		t.Fatal(err)
	}
	a, err := llm.NewAsyncEngine(llm.Config{MaxModelLen: maxLen}, c, tok, loggers...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestRealEngine runs the OpenAI SDK scenarios and bad requests against the
// real AsyncEngine: bad requests never move the engine's statistics.
func TestRealEngine(t *testing.T) {
	counter := &countingLogger{}
	eng := newRealEngine(t, counter)
	s, err := New(Config{ServedModelNames: []string{model}}, eng)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()

	for _, body := range []string{
		`{"prompt":"a","top_p":0}`, `{"prompt":"a","max_tokens":1000}`, `{"prompt":"` + strings.Repeat("x", 300) + `"}`,
		`{"prompt":[1,99999]}`, `{"model":"other","prompt":"a"}`, `{"prompt":"a","n":0}`,
	} {
		if r := do(t, srv, "POST", "/v1/completions", body); r.status < 400 {
			t.Fatalf("%s accepted: %s", body, r.body)
		}
	}
	if p, f := counter.counts(); p != 0 || f != 0 {
		t.Fatalf("bad requests reached the engine: %d prompt tokens, %d finished", p, f)
	}

	runSDKChecks(t, context.Background(), newSDKClient(srv.URL, ""), model, "")
	// Four generation requests; the stat loggers see each step right after
	// its outputs were delivered, so wait for the last one.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, f := counter.counts()
		if f == 4 {
			break
		}
		if f > 4 || time.Now().After(deadline) {
			t.Fatalf("finished requests = %d, want 4 (the SDK scenarios)", f)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRealEngineTokenConstraints: logit_bias, allowed_token_ids and
// bad_words change what the real model generates (greedy, so the
// unconstrained text is known).
func TestRealEngineTokenConstraints(t *testing.T) {
	eng := newRealEngine(t)
	s, err := New(Config{ServedModelNames: []string{model}}, eng)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	tok := eng.Tokenizer()
	const base = `{"prompt":"Once upon a time","max_tokens":4,"temperature":0,"ignore_eos":true`
	text := func(extra string) string {
		t.Helper()
		r := do(t, srv, "POST", "/v1/completions", base+extra+`}`)
		return choices(t, r)[0].(map[string]any)["text"].(string)
	}
	plain := text("")
	piece := tok.Decode([]int32{300}, false)
	first := tok.Encode(plain, false)[0]
	tests := []struct {
		name, extra string
		ok          func(got string) bool
	}{
		{"logit_bias +100 on one token", `,"logit_bias":{"300":100}`, func(got string) bool { return got == strings.Repeat(piece, 4) }},
		{"allowed_token_ids of one token", `,"allowed_token_ids":[300]`, func(got string) bool { return got == strings.Repeat(piece, 4) }},
		{"logit_bias -100 on the first token", `,"logit_bias":{"` + strconv.Itoa(int(first)) + `":-100}`, func(got string) bool { return got != plain }},
		{"special tokens skipped", `,"allowed_token_ids":[256]`, func(got string) bool { return got == "" }},
		{"special tokens kept", `,"allowed_token_ids":[256],"skip_special_tokens":false`, func(got string) bool { return got == " <s> <s> <s> <s>" }},
		{"special tokens kept, not spaced", `,"allowed_token_ids":[256],"skip_special_tokens":false,"spaces_between_special_tokens":false`,
			func(got string) bool { return got == "<s><s><s><s>" }},
		{"bad_words of the first word", `,"bad_words":[` + strconv.Quote(tok.Decode([]int32{first}, false)) + `]`, func(got string) bool { return got != plain }},
	}
	for _, tc := range tests {
		if got := text(tc.extra); !tc.ok(got) {
			t.Errorf("%s: %q (unconstrained %q)", tc.name, got, plain)
		}
	}
}
