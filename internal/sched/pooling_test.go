package sched_test

import (
	"errors"
	"slices"
	"testing"

	"govllm/internal/kvcache"
	"govllm/internal/pooling"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// poolRunner stands in for the runner: each token's "hidden state" is the
// one float of its id, fed to the request's accumulator as the runner
// feeds it; generation requests sample token 7.
func poolRunner(so *sched.SchedulerOutput) *sched.RunnerOutput {
	ro := &sched.RunnerOutput{SampledTokenIDs: make([]int32, len(so.Requests)), Pooled: make([][]float32, len(so.Requests))}
	for i, sr := range so.Requests {
		ro.SampledTokenIDs[i] = -1
		switch {
		case sr.Pool != nil:
			rows := make([]float32, len(sr.TokenIDs))
			for j, id := range sr.TokenIDs {
				rows[j] = float32(id)
			}
			sr.Pool.Add(sr.Start, rows, 1)
			if sr.Sample {
				ro.Pooled[i] = sr.Pool.Result()
			}
		case sr.Sample:
			ro.SampledTokenIDs[i] = 7
		}
	}
	return ro
}

func newPoolSched(t *testing.T, prefixCaching bool) *sched.Scheduler {
	t.Helper()
	kv, err := kvcache.NewManager(kvcache.Config{NumBlocks: 64, BlockSize: 4, EnablePrefixCaching: prefixCaching})
	if err != nil {
		t.Fatal(err)
	}
	c := sched.DefaultConfig()
	c.MaxModelLen, c.MaxNumBatchedTokens, c.MaxNumSeqs = 64, 4, 4
	s, err := sched.New(c, kv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func addReq(t *testing.T, s *sched.Scheduler, id string, prompt []int32, p *pooling.Params) {
	t.Helper()
	params := sampling.Default()
	params.MaxTokens = 1
	if err := s.AddRequest(sched.EngineRequest{ID: sched.RequestID(id), PromptTokenIDs: prompt, Params: params, EOSTokenID: -1, Pooling: p}); err != nil {
		t.Fatal(err)
	}
}

// runAll steps until no request is left and returns each request's last
// output and the first position it was scheduled from. An embedding
// request has exactly one output.
func runAll(t *testing.T, s *sched.Scheduler) (map[sched.RequestID]sched.CoreOutput, map[sched.RequestID]int) {
	t.Helper()
	outs, starts := map[sched.RequestID]sched.CoreOutput{}, map[sched.RequestID]int{}
	for step := 0; s.HasRequests(); step++ {
		if step > 100 {
			t.Fatal("no progress")
		}
		so := s.Schedule()
		for _, sr := range so.Requests {
			if _, seen := starts[sr.ID]; !seen {
				starts[sr.ID] = sr.Start
			}
		}
		ro := poolRunner(so)
		if err := sched.CheckRunnerOutput(so, ro); err != nil {
			t.Fatal(err)
		}
		for _, o := range s.UpdateFromOutput(so, ro).Outputs {
			if prev, dup := outs[o.ReqID]; dup && (prev.Pooled != nil || o.Pooled != nil) {
				t.Fatalf("%s: a second output beside the pooled one", o.ReqID)
			}
			outs[o.ReqID] = o
		}
	}
	return outs, starts
}

// TestPoolingRequest: an embedding request is prefilled in chunks (token
// budget 4), gets one output when its prompt is done — finish reason
// stop, no token, the pooled vector of its rows — and leaves no blocks;
// a generation request beside it samples as usual.
func TestPoolingRequest(t *testing.T) {
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		p    pooling.Params
		want float32
	}{{pooling.Params{Type: pooling.Mean}, 5.5}, {pooling.Params{Type: pooling.Last}, 10}, {pooling.Params{Type: pooling.CLS}, 1}} {
		t.Run(tt.p.Type.String(), func(t *testing.T) {
			s := newPoolSched(t, false)
			addReq(t, s, "emb", prompt, &tt.p)
			addReq(t, s, "gen", []int32{3, 4}, nil)
			outs, _ := runAll(t, s)
			e, g := outs["emb"], outs["gen"]
			if e.FinishReason != stats.FinishStop || len(e.NewTokenIDs) != 0 || !slices.Equal(e.Pooled, []float32{tt.want}) || e.PrefillStats == nil {
				t.Errorf("embedding output %+v", e)
			}
			if !slices.Equal(g.NewTokenIDs, []int32{7}) || g.FinishReason != stats.FinishLength || g.Pooled != nil {
				t.Errorf("generation output %+v", g)
			}
			if u := s.MakeStats().KVCacheUsage; u != 0 {
				t.Errorf("KV usage %g after both finished", u)
			}
		})
	}
}

// TestPoolingPrefixCache: after a generation request cached a prompt's
// blocks, a LAST embedding of the same prompt starts from the cached
// prefix, while MEAN and CLS compute every token (the cache holds no
// hidden states).
func TestPoolingPrefixCache(t *testing.T) {
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		typ   pooling.Type
		start int
	}{{pooling.Last, 8}, {pooling.Mean, 0}, {pooling.CLS, 0}} {
		t.Run(tt.typ.String(), func(t *testing.T) {
			s := newPoolSched(t, true)
			addReq(t, s, "warm", prompt, nil)
			runAll(t, s)
			addReq(t, s, "emb", prompt, &pooling.Params{Type: tt.typ})
			outs, starts := runAll(t, s)
			if starts["emb"] != tt.start || outs["emb"].PrefillStats.NumCachedTokens != tt.start {
				t.Errorf("scheduled from %d with %d cached tokens, want %d", starts["emb"], outs["emb"].PrefillStats.NumCachedTokens, tt.start)
			}
			want := map[pooling.Type]float32{pooling.Last: 10, pooling.Mean: 5.5, pooling.CLS: 1}[tt.typ]
			if !slices.Equal(outs["emb"].Pooled, []float32{want}) {
				t.Errorf("pooled %v, want %v", outs["emb"].Pooled, want)
			}
		})
	}
}

// TestPoolingRunnerOutputChecked: a runner that finishes an embedding's
// prompt without its vector is refused.
func TestPoolingRunnerOutputChecked(t *testing.T) {
	s := newPoolSched(t, false)
	addReq(t, s, "emb", []int32{1, 2}, &pooling.Params{Type: pooling.Last})
	so := s.Schedule()
	ro := &sched.RunnerOutput{SampledTokenIDs: []int32{-1}}
	if err := sched.CheckRunnerOutput(so, ro); !errors.Is(err, sched.ErrBadRunnerOutput) {
		t.Fatalf("missing vector: %v", err)
	}
	ro.Pooled = [][]float32{{1}, {2}}
	if err := sched.CheckRunnerOutput(so, ro); !errors.Is(err, sched.ErrBadRunnerOutput) {
		t.Fatalf("misaligned vectors: %v", err)
	}
	s.AbandonStep(so)
}

// TestPoolingPreempted: an embedding request preempted mid-prefill (a
// decoding request beside it needs its blocks) is computed again from
// position 0, and its vector is that of its whole prompt, once.
func TestPoolingPreempted(t *testing.T) {
	kv, err := kvcache.NewManager(kvcache.Config{NumBlocks: 6, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	c := sched.DefaultConfig()
	c.MaxModelLen, c.MaxNumBatchedTokens, c.MaxNumSeqs = 24, 4, 4
	s, err := sched.New(c, kv)
	if err != nil {
		t.Fatal(err)
	}
	params := sampling.Default()
	params.MaxTokens, params.IgnoreEOS = 16, true
	if err := s.AddRequest(sched.EngineRequest{ID: "gen", PromptTokenIDs: []int32{1, 2, 3, 4}, Params: params, EOSTokenID: -1}); err != nil {
		t.Fatal(err)
	}
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	addReq(t, s, "emb", prompt, &pooling.Params{Type: pooling.Mean})
	outs, _ := runAll(t, s)
	e := outs["emb"]
	preempted := slices.ContainsFunc(e.Events, func(ev stats.Event) bool { return ev.Type == stats.EventPreempted })
	if !preempted || !slices.Equal(e.Pooled, []float32{8.5}) || e.FinishReason != stats.FinishStop {
		t.Errorf("preempted %v, output %+v; want the mean 8.5 of the prompt", preempted, e)
	}
}
