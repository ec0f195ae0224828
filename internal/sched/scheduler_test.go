package sched_test

import (
	"errors"
	"slices"
	"testing"

	"govllm/internal/kvcache"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

func TestConfigValidate(t *testing.T) {
	mod := func(f func(*sched.Config)) sched.Config {
		c := sched.DefaultConfig()
		f(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  sched.Config
		ok   bool
	}{
		{"default", sched.DefaultConfig(), true},
		{"priority", mod(func(c *sched.Config) { c.Policy = sched.Priority }), true},
		{"zero seqs", mod(func(c *sched.Config) { c.MaxNumSeqs = 0 }), false},
		{"zero budget", mod(func(c *sched.Config) { c.MaxNumBatchedTokens = 0 }), false},
		{"tiny model len", mod(func(c *sched.Config) { c.MaxModelLen = 1 }), false},
		{"bad policy", mod(func(c *sched.Config) { c.Policy = 7 }), false},
		{"negative threshold", mod(func(c *sched.Config) { c.LongPrefillTokenThreshold = -1 }), false},
		{"no chunking, budget < model len", mod(func(c *sched.Config) { c.EnableChunkedPrefill = false; c.MaxModelLen = 4096 }), false},
		{"no chunking, budget = model len", mod(func(c *sched.Config) { c.EnableChunkedPrefill = false }), true},
		{"budget < seqs", mod(func(c *sched.Config) { c.MaxNumBatchedTokens = 64; c.MaxNumSeqs = 128 }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, sched.ErrInvalidConfig) {
				t.Fatalf("%v does not wrap ErrInvalidConfig", err)
			}
		})
	}
	if p, err := sched.ParsePolicy("priority"); err != nil || p != sched.Priority || p.String() != "priority" {
		t.Fatalf("ParsePolicy: %v %v", p, err)
	}
	if _, err := sched.ParsePolicy("lifo"); !errors.Is(err, sched.ErrInvalidConfig) {
		t.Fatalf("ParsePolicy(lifo) = %v", err)
	}
}

func TestNewRejectsModelLenBeyondKV(t *testing.T) {
	kv, _ := kvcache.NewManager(kvcache.Config{NumBlocks: 4, BlockSize: 4})
	c := sched.DefaultConfig()
	c.MaxModelLen = 17
	if _, err := sched.New(c, kv); !errors.Is(err, sched.ErrInvalidConfig) {
		t.Fatalf("New = %v, want ErrInvalidConfig", err)
	}
	c.MaxModelLen = 16
	c.MaxNumBatchedTokens = 16
	c.MaxNumSeqs = 4
	if _, err := sched.New(c, kv); err != nil {
		t.Fatal(err)
	}
}

func TestAddRequestErrors(t *testing.T) {
	h := newHarness(t, defaultOpts())
	h.add("dup", prompt(0, 3), 4)
	zero := params(4)
	zero.MaxTokens = 0
	tests := []struct {
		name string
		req  sched.EngineRequest
		want error
	}{
		{"empty", sched.EngineRequest{ID: "e", Params: params(4)}, sched.ErrEmptyPrompt},
		{"too long", sched.EngineRequest{ID: "l", PromptTokenIDs: prompt(0, 256), Params: params(4)}, sched.ErrPromptTooLong},
		{"duplicate", sched.EngineRequest{ID: "dup", PromptTokenIDs: prompt(0, 3), Params: params(4)}, sched.ErrDuplicateRequest},
		{"max tokens 0", sched.EngineRequest{ID: "z", PromptTokenIDs: prompt(0, 3), Params: zero}, sched.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := h.s.AddRequest(tt.req); !errors.Is(err, tt.want) {
				t.Fatalf("AddRequest = %v, want %v", err, tt.want)
			}
		})
	}
	if h.s.NumWaiting() != 1 {
		t.Fatalf("waiting %d, want 1", h.s.NumWaiting())
	}
	h.run()
	h.checkDrained()
}

// TestSchedulePlans checks, step by step, which requests run and how many
// tokens each computes: budget splits, chunked prefill, decode + prefill in
// one step, MaxNumSeqs, the long-prefill threshold, chunking off.
func TestSchedulePlans(t *testing.T) {
	type req struct {
		id        string
		n         int
		maxTokens int
	}
	tests := []struct {
		name  string
		conf  func(*harnessOpts)
		reqs  []req
		plans []string // "id:start+count" with * when the step samples
	}{
		{
			name: "budget splits the last prompt",
			conf: func(o *harnessOpts) { o.sched.MaxNumBatchedTokens = 10; o.sched.MaxNumSeqs = 4 },
			reqs: []req{{"a", 4, 2}, {"b", 4, 2}, {"c", 4, 2}},
			plans: []string{
				"a:0+4* b:0+4* c:0+2",
				"a:4+1* b:4+1* c:2+2*",
				"c:4+1*",
				"",
			},
		},
		{
			name: "chunked prefill across steps, then decode",
			conf: func(o *harnessOpts) { o.sched.MaxNumBatchedTokens = 8; o.sched.MaxNumSeqs = 4 },
			reqs: []req{{"a", 20, 2}},
			plans: []string{
				"a:0+8",
				"a:8+8",
				"a:16+4*",
				"a:20+1*",
				"",
			},
		},
		{
			name: "decode and prefill in one step",
			conf: func(o *harnessOpts) { o.sched.MaxNumBatchedTokens = 8; o.sched.MaxNumSeqs = 4 },
			reqs: []req{{"a", 3, 3}, {"b", 12, 1}},
			plans: []string{
				"a:0+3* b:0+5",
				"a:3+1* b:5+7*",
				"a:4+1*",
				"",
			},
		},
		{
			name: "max num seqs",
			conf: func(o *harnessOpts) { o.sched.MaxNumSeqs = 2; o.sched.MaxNumBatchedTokens = 64 },
			reqs: []req{{"a", 2, 1}, {"b", 2, 2}, {"c", 2, 1}},
			plans: []string{
				"a:0+2* b:0+2*",
				"b:2+1* c:0+2*",
				"",
			},
		},
		{
			name: "long prefill threshold",
			conf: func(o *harnessOpts) { o.sched.LongPrefillTokenThreshold = 5 },
			reqs: []req{{"a", 12, 1}, {"b", 3, 2}},
			plans: []string{
				"a:0+5 b:0+3*",
				"a:5+5 b:3+1*",
				"a:10+2*",
				"",
			},
		},
		{
			name: "chunking off: a prompt that does not fit waits",
			conf: func(o *harnessOpts) {
				o.sched.EnableChunkedPrefill = false
				o.sched.MaxNumBatchedTokens = 16
				o.sched.MaxModelLen = 16
				o.sched.MaxNumSeqs = 4
			},
			reqs: []req{{"a", 10, 2}, {"b", 10, 1}},
			plans: []string{
				"a:0+10*",
				"a:10+1* b:0+10*",
				"",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOpts()
			tt.conf(&o)
			h := newHarness(t, o)
			for i, r := range tt.reqs {
				h.add(r.id, prompt(100*i, r.n), r.maxTokens)
			}
			for i, want := range tt.plans {
				if got, _ := h.step(); got != want {
					t.Fatalf("step %d: plan %q, want %q (so far %q)", i, got, want, h.plans)
				}
			}
			for _, r := range tt.reqs {
				if got := len(h.tokens[sched.RequestID(r.id)]); got != r.maxTokens {
					t.Errorf("%s: %d tokens, want %d", r.id, got, r.maxTokens)
				}
			}
			h.checkDrained()
		})
	}
}

// TestChunkedPrefillOutputs: no output for partial chunks; the first output
// carries QUEUED, SCHEDULED and the PrefillStats.
func TestChunkedPrefillOutputs(t *testing.T) {
	o := defaultOpts()
	o.sched.MaxNumBatchedTokens = 8
	o.sched.MaxNumSeqs = 4
	h := newHarness(t, o)
	h.add("a", prompt(0, 20), 2)
	for i := range 2 {
		if _, outs := h.step(); len(outs.Outputs) != 0 {
			t.Fatalf("step %d: output for a partial prefill: %+v", i, outs.Outputs)
		}
	}
	_, outs := h.step()
	if len(outs.Outputs) != 1 || len(outs.Outputs[0].NewTokenIDs) != 1 {
		t.Fatalf("outputs %+v", outs.Outputs)
	}
	first := outs.Outputs[0]
	if got := h.eventTypes("a"); !slices.Equal(got, []stats.EventType{stats.EventQueued, stats.EventScheduled}) {
		t.Fatalf("events %v", got)
	}
	if first.PrefillStats == nil || *first.PrefillStats != (stats.PrefillStats{NumPromptTokens: 20, NumComputedTokens: 20}) {
		t.Fatalf("prefill stats %+v", first.PrefillStats)
	}
	_, outs = h.step()
	if o := outs.Outputs[0]; o.Events != nil || o.PrefillStats != nil || o.FinishReason != stats.FinishLength {
		t.Fatalf("second output %+v", o)
	}
	h.checkDrained()
}

// TestPrefixHits: a second request sharing a prompt hits the blocks the
// first computes, in a later step or in the same one (vLLM registers full
// blocks when it allocates them); the hits show in that step's stats and
// its PrefillStats.
func TestPrefixHits(t *testing.T) {
	shared := prompt(0, 18) // block size 4: 4 full blocks + 2
	second := append(slices.Clone(shared), 77, 78, 79)
	tests := []struct {
		name       string
		together   bool // added in the same step: a's blocks are being computed
		wantPlan   string
		wantPrefix stats.PrefillStats
	}{
		{"after the first", false, "a:0+18*", stats.PrefillStats{NumPromptTokens: 21, NumCachedTokens: 16, NumComputedTokens: 5}},
		{"same step", true, "a:0+18* b:16+5*", stats.PrefillStats{NumPromptTokens: 21, NumCachedTokens: 16, NumComputedTokens: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, defaultOpts())
			h.add("a", shared, 3)
			if tt.together {
				h.add("b", second, 3)
			}
			plan, outs := h.step()
			st := outs.SchedulerStats.PrefixCacheStats
			want := stats.PrefixCacheStats{Requests: 1, Queries: 18}
			if tt.together {
				want = stats.PrefixCacheStats{Requests: 2, Queries: 18 + 21, Hits: 16}
			}
			if st != want || plan != tt.wantPlan {
				t.Fatalf("first step: plan %q, prefix stats %+v, want %q, %+v", plan, st, tt.wantPlan, want)
			}
			if !tt.together {
				h.add("b", second, 3)
				plan, outs := h.step()
				if st := outs.SchedulerStats.PrefixCacheStats; st != (stats.PrefixCacheStats{Requests: 1, Queries: 21, Hits: 16}) {
					t.Fatalf("second step prefix stats %+v", st)
				}
				if plan != "a:18+1* b:16+5*" {
					t.Fatalf("plan %q", plan)
				}
			}
			h.run()
			if got := *h.prefill["b"]; got != tt.wantPrefix {
				t.Fatalf("b prefill stats %+v, want %+v", got, tt.wantPrefix)
			}
			h.checkTokens(reference(t, []sched.EngineRequest{
				{ID: "a", PromptTokenIDs: shared, Params: params(3), EOSTokenID: -1},
				{ID: "b", PromptTokenIDs: second, Params: params(3), EOSTokenID: -1},
			}))
			h.checkDrained()
		})
	}
}

// TestFullPromptHitRecomputesLastToken: an identical prompt hits all but
// the block holding its last token.
func TestFullPromptHitRecomputesLastToken(t *testing.T) {
	h := newHarness(t, defaultOpts())
	p := prompt(0, 16)
	h.add("a", p, 1)
	h.run()
	h.add("b", p, 1)
	plan, _ := h.step()
	if plan != "b:12+4*" {
		t.Fatalf("plan %q", plan)
	}
	h.checkDrained()
}
