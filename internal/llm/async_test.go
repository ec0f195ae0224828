package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"govllm/internal/apierr"
	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

// stepUntil lets the gated core run one step at a time until cond holds
// on the recorder's aggregate. The bound is a liveness guard only.
func stepUntil(t *testing.T, g *gate, rec *recorder, cond func(aggregate) bool) aggregate {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if a := rec.snapshot(); cond(a) {
			return a
		}
		select {
		case g.step <- struct{}{}:
		case <-rec.notify:
		case <-deadline:
			t.Fatalf("condition never reached; aggregate %+v", rec.snapshot())
		}
	}
}

func TestAsyncCancelCountsAbortAndFreesBlocks(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	c, g := newCore(t, coreOpts{})
	rec := newRecorder()
	a, err := NewAsyncEngine(DefaultConfig(), c, tok, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	victim, err := a.Generate(ctx, Request{ID: "victim", PromptTokenIDs: prompt(0, 40), Params: forced(1000)})
	if err != nil {
		t.Fatal(err)
	}
	keep, err := a.Generate(context.Background(), Request{ID: "keep", PromptTokenIDs: prompt(1, 8), Params: forced(60), OutputKind: output.FinalOnly})
	if err != nil {
		t.Fatal(err)
	}
	// Run until the victim streamed three tokens.
	before := stepUntil(t, g, rec, func(a aggregate) bool { return a.GenTokens >= 6 })
	got := 0
	for got < 3 {
		o, err := victim.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got += len(o.Outputs[0].TokenIDs)
	}
	if before.Last.NumRunningReqs != 2 || before.Last.KVCacheUsage == 0 {
		t.Fatalf("before cancel: running %d, kv %g", before.Last.NumRunningReqs, before.Last.KVCacheUsage)
	}

	cancel() // the client goes away
	after := stepUntil(t, g, rec, func(a aggregate) bool { return a.ClientAborts > 0 })
	if snap := after.AbortSnapshot; snap.NumRunningReqs != 1 || !(snap.KVCacheUsage < before.Last.KVCacheUsage) {
		t.Errorf("step that reported the abort: running %d, kv %g (before %g): blocks not freed at once",
			snap.NumRunningReqs, snap.KVCacheUsage, before.Last.KVCacheUsage)
	}
	// The victim's consumer, still reading, gets the abort then EOF.
	var last *output.RequestOutput
	for {
		o, err := victim.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = o
	}
	if last == nil || !last.Finished || last.Outputs[0].FinishReason != stats.FinishAbort {
		t.Fatalf("victim's last output %+v", last)
	}

	g.Open()
	o, err := keep.Next(context.Background())
	if err != nil || !o.Finished || len(o.Outputs[0].TokenIDs) != 60 {
		t.Fatalf("keep: %+v, %v", o, err)
	}
	final := rec.waitIdle(t)
	if final.Finished[stats.FinishAbort] != 1 || final.ClientAborts != 1 || final.Finished[stats.FinishLength] != 1 {
		t.Errorf("finished %v, client aborts %d", final.Finished, final.ClientAborts)
	}
	if final.LatencyObservations != 1 {
		t.Errorf("latency observations %d, want 1 (the cancelled request is not a latency sample)", final.LatencyObservations)
	}
	var ab stats.FinishedRequestStats
	for _, f := range final.FinishedStats {
		if f.ClientAbort {
			ab = f
		}
	}
	if ab.NumPromptTokens != 40 || ab.NumGenerationTokens < 3 || ab.NumGenerationTokens >= 1000 {
		t.Errorf("aborted request stats %+v", ab)
	}
	if final.Last.NumRunningReqs != 0 || final.Last.KVCacheUsage != 0 {
		t.Errorf("gauges after the last step: %+v", final.Last)
	}
	if final.GenTokens != 60+ab.NumGenerationTokens || final.PromptTokens != 48 {
		t.Errorf("tokens: prompt %d, generation %d", final.PromptTokens, final.GenTokens)
	}
}

func TestStopStringFinishBothFrontEnds(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	base := Request{ID: "s", PromptTokenIDs: prompt(3, 6), Params: forced(40)}
	// The text the request produces without stop strings.
	c, g := newCore(t, coreOpts{})
	full := runSync(t, c, g, tok, DefaultConfig(), []Request{base})["s"].text[0]
	r := []rune(full)
	if len(r) < 12 {
		t.Fatalf("generated text too short: %q", full)
	}
	stop := string(r[len(r)/2 : len(r)/2+2])
	want := full[:strings.Index(full, stop)]
	for _, fe := range frontEnds {
		t.Run(fe.name, func(t *testing.T) {
			req := base
			req.Params.Stop = []string{stop}
			c, g := newCore(t, coreOpts{})
			rec := newRecorder()
			res := fe.run(t, c, g, tok, DefaultConfig(), []Request{req}, rec)["s"]
			if res.text[0] != want || res.finish[0] != stats.FinishStop || res.stop[0] != stop {
				t.Errorf("got %q %v %v; want %q stop %q", res.text[0], res.finish[0], res.stop[0], want, stop)
			}
			a := rec.snapshot()
			if a.Finished[stats.FinishStop] != 1 || sumReasons(a.Finished) != 1 {
				t.Errorf("finished %v: the core's abort of a stopped request must not count again", a.Finished)
			}
			if a.Last.NumRunningReqs != 0 || a.Last.KVCacheUsage != 0 {
				t.Errorf("the stopped request still holds the core: %+v", a.Last)
			}
			if len(res.tokens[0]) >= 40 {
				t.Errorf("generation ran to max_tokens (%d tokens) despite the stop string", len(res.tokens[0]))
			}
		})
	}
}

func TestAsyncCloseEndsStreams(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	c, _ := newCore(t, coreOpts{}) // the gate stays shut: the request never finishes
	rec := newRecorder()
	a, err := NewAsyncEngine(DefaultConfig(), c, tok, rec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Generate(context.Background(), Request{ID: "x", PromptTokenIDs: prompt(0, 4), Params: forced(10), OutputKind: output.Cumulative})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	o, err := s.Next(context.Background())
	if err != nil || !o.Finished || o.Outputs[0].FinishReason != stats.FinishAbort {
		t.Fatalf("after Close: %+v, %v", o, err)
	}
	if _, err := s.Next(context.Background()); err != io.EOF {
		t.Errorf("got %v, want io.EOF", err)
	}
	if _, err := a.Generate(context.Background(), Request{ID: "y", PromptTokenIDs: prompt(0, 4), Params: forced(10)}); !errors.Is(err, ErrClosed) {
		t.Errorf("Generate after Close: %v", err)
	}
	if !errors.Is(a.Err(), ErrClosed) || a.Close() != nil {
		t.Errorf("Err after Close: %v", a.Err())
	}
}

func TestAsyncEngineDeath(t *testing.T) {
	boom := errors.New("executor exploded")
	tok := tokenizer.NewDummy(testVocab)
	c, g := newCore(t, coreOpts{execErr: boom})
	g.Open()
	a, err := NewAsyncEngine(DefaultConfig(), c, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := a.Generate(context.Background(), Request{ID: "x", PromptTokenIDs: prompt(0, 4), Params: forced(10)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Next(context.Background())
	if !errors.Is(err, ErrEngineDead) || !strings.Contains(err.Error(), boom.Error()) {
		t.Fatalf("stream error %v, want ErrEngineDead with the cause", err)
	}
	if !errors.Is(a.Err(), ErrEngineDead) {
		t.Errorf("Err() = %v", a.Err())
	}
	if _, err := a.Generate(context.Background(), Request{ID: "y", PromptTokenIDs: prompt(0, 4), Params: forced(10)}); !errors.Is(err, ErrEngineDead) {
		t.Errorf("Generate on a dead engine: %v", err)
	}
}

func TestValidation(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	c, _ := newCore(t, coreOpts{maxModelLen: 64})
	a, err := NewAsyncEngine(llmConfig(coreOpts{maxModelLen: 64}), c, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p := func(mut func(*sampling.Params)) sampling.Params { q := forced(8); mut(&q); return q }
	cases := []struct {
		name    string
		reqs    []Request
		param   string
		tooLong bool
		msg     string
	}{
		{"empty prompt", []Request{{ID: "a", Prompt: "", Params: forced(8)}}, "prompt", false, "must not be empty"},
		{"empty token ids", []Request{{ID: "a", PromptTokenIDs: []int32{}, Params: forced(8)}}, "prompt", false, "must not be empty"},
		{"prompt fills the context", []Request{{ID: "a", PromptTokenIDs: prompt(0, 64), Params: forced(1)}}, "prompt", true, "leaving no room"},
		{"prompt + max_tokens too long", []Request{{ID: "a", PromptTokenIDs: prompt(0, 60), Params: forced(5)}}, "max_tokens", true, "at most 4"},
		{"token out of vocabulary", []Request{{ID: "a", PromptTokenIDs: []int32{1, testVocab}, Params: forced(5)}}, "prompt", false, "out of range"},
		{"negative token id", []Request{{ID: "a", PromptTokenIDs: []int32{-1}, Params: forced(5)}}, "prompt", false, "out of range"},
		{"stop token out of vocabulary", []Request{{ID: "a", PromptTokenIDs: prompt(0, 4), Params: p(func(q *sampling.Params) { q.StopTokenIDs = []int32{testVocab} })}}, "stop_token_ids", false, "out of range"},
		{"bad top_p", []Request{{ID: "a", PromptTokenIDs: prompt(0, 4), Params: p(func(q *sampling.Params) { q.TopP = 0 })}}, "top_p", false, "(0, 1]"},
		{"negative max_tokens", []Request{{ID: "a", PromptTokenIDs: prompt(0, 4), Params: p(func(q *sampling.Params) { q.MaxTokens = -1 })}}, "max_tokens", false, ""},
		{"priority without the priority policy", []Request{{ID: "a", PromptTokenIDs: prompt(0, 4), Params: forced(5), Priority: 1}}, "priority", false, "--scheduling-policy priority"},
		{"n above the limit", []Request{{ID: "a", PromptTokenIDs: prompt(0, 4), Params: p(func(q *sampling.Params) { q.N = DefaultMaxN + 1 })}}, "n", false, "--max-request-n"},
		{"the second of two prompts", []Request{{ID: "a", PromptTokenIDs: prompt(0, 4), Params: forced(5)}, {ID: "b", PromptTokenIDs: prompt(0, 62), Params: forced(5)}}, "max_tokens", true, "prompt[1]: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Prepare(tc.reqs...)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Param != tc.param || ae.HTTPStatus() != 400 ||
				errors.Is(err, ErrPromptTooLong) != tc.tooLong || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want a 400 *apierr.Error{%s} containing %q (too long: %v)", err, tc.param, tc.msg, tc.tooLong)
			}
			if len(tc.reqs) == 1 {
				if _, err := a.Generate(context.Background(), tc.reqs[0]); err == nil || err.Error() != ae.Error() {
					t.Fatalf("Generate: %v, want Prepare's %v", err, ae)
				}
			}
		})
	}
	// max_tokens 0 fills the rest of the context; a text prompt is tokenized.
	prs, err := a.Prepare(Request{ID: "b", Prompt: "hello", Params: p(func(q *sampling.Params) { q.MaxTokens = 0 })})
	if err != nil {
		t.Fatal(err)
	}
	if pr := prs[0].Request(); len(pr.PromptTokenIDs) == 0 || pr.Params.MaxTokens != 64-len(pr.PromptTokenIDs) || pr.ArrivalTime.IsZero() {
		t.Errorf("prepared %+v", pr)
	}
}

func TestConfigFromCore(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	cases := []struct {
		name    string
		cfg     Config
		want    int
		wantErr bool
	}{
		{"zero takes the core's", Config{}, 64, false},
		{"stricter than the core", Config{MaxModelLen: 32}, 32, false},
		{"above the core", Config{MaxModelLen: 65}, 0, true},
		{"invalid", Config{MaxModelLen: 1}, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			core, _ := newCore(t, coreOpts{maxModelLen: 64})
			e, err := New(c.cfg, core, tok)
			if (err != nil) != c.wantErr {
				t.Fatalf("New: %v", err)
			}
			if err == nil && e.MaxModelLen() != c.want {
				t.Errorf("MaxModelLen = %d, want %d", e.MaxModelLen(), c.want)
			}
		})
	}
}

// TestAsyncCancellationStorm: many concurrent streaming requests, a third
// of them cancelled mid-flight. Whatever the interleaving, every stream
// ends with a finished output, the statistics account for every request
// exactly once, the tokens counted equal the tokens delivered, and the
// engine ends empty.
func TestAsyncCancellationStorm(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	c, g := newCore(t, coreOpts{numBlocks: 64, blockSize: 8, maxModelLen: 512})
	g.Open()
	rec := newRecorder()
	a, err := NewAsyncEngine(Config{}, c, tok, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const n = 40
	type outcome struct {
		tokens int
		finish stats.FinishReason
		err    error
	}
	outs := make(chan outcome, n)
	for i := range n {
		go func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := a.Generate(ctx, Request{ID: fmt.Sprintf("storm-%d", i), PromptTokenIDs: prompt(i, 5+i%7), Params: forced(5 + (i*13)%60)})
			if err != nil {
				outs <- outcome{err: err}
				return
			}
			var o outcome
			for reads := 0; ; reads++ {
				if i%3 == 0 && reads == 1+i%4 {
					cancel() // the client goes away; keep reading to see the end
				}
				ro, err := s.Next(context.Background())
				if err == io.EOF {
					break
				}
				if err != nil {
					o.err = err
					break
				}
				o.tokens += len(ro.Outputs[0].TokenIDs)
				o.finish = ro.Outputs[0].FinishReason
			}
			outs <- o
		}()
	}
	delivered, aborted := 0, 0
	for range n {
		o := <-outs
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.finish == stats.FinishNone {
			t.Errorf("a stream ended without a finish reason")
		}
		if o.finish == stats.FinishAbort {
			aborted++
		}
		delivered += o.tokens
	}
	agg := rec.waitIdle(t)
	if sumReasons(agg.Finished) != n || agg.Finished[stats.FinishAbort] != aborted || agg.ClientAborts != aborted {
		t.Errorf("finished %v, client aborts %d; streams saw %d aborts of %d", agg.Finished, agg.ClientAborts, aborted, n)
	}
	if agg.GenTokens != delivered {
		t.Errorf("generation tokens counted %d, delivered %d", agg.GenTokens, delivered)
	}
	if agg.Last.NumRunningReqs != 0 || agg.Last.NumWaitingReqs != 0 || agg.Last.KVCacheUsage != 0 {
		t.Errorf("engine not empty: %+v", agg.Last)
	}
	if len(agg.NParams) != n {
		t.Errorf("%d user requests observed, want %d", len(agg.NParams), n)
	}
	t.Logf("%d of %d requests aborted by their clients", aborted, n)
}
