package llm

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

// workload is vLLM's metrics "case 6": N requests of prompt length P,
// forced to M tokens (ignore EOS).
type workload struct {
	name    string
	n, p, m int
	opts    coreOpts
	shared  bool // every request has the same prompt (prefix-cache hits)
}

func (w workload) requests() []Request {
	reqs := make([]Request, w.n)
	for i := range reqs {
		src := i
		if w.shared {
			src = 0
		}
		reqs[i] = Request{ID: fmt.Sprintf("req-%d", i), PromptTokenIDs: prompt(src, w.p), Params: forced(w.m)}
	}
	return reqs
}

var workloads = []workload{
	{name: "case 6: 10 requests P=8 M=10", n: 10, p: 8, m: 10},
	{name: "one token each", n: 4, p: 5, m: 1},
	{name: "chunked prefill of long prompts", n: 6, p: 150, m: 7, opts: coreOpts{maxNumSeqs: 4, budget: 64}},
	{name: "shared prompt with prefix caching", n: 5, p: 40, m: 6, opts: coreOpts{prefixCaching: true, maxNumSeqs: 1}, shared: true},
	{name: "tiny KV cache forces preemption", n: 8, p: 12, m: 40, opts: coreOpts{numBlocks: 24, blockSize: 4, maxModelLen: 96}},
}

// TestInvariantsBothFrontEnds runs every workload through the sync Engine
// and the AsyncEngine (concurrent streaming consumers) and checks one
// table of expectations against what a StatLogger received, then that both
// front ends produced the same outputs and the same batching-independent
// aggregates: one seam, one set of figures.
func TestInvariantsBothFrontEnds(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	for _, w := range workloads {
		t.Run(w.name, func(t *testing.T) {
			aggs := map[string]aggregate{}
			outs := map[string]map[string]*result{}
			for _, fe := range frontEnds {
				t.Run(fe.name, func(t *testing.T) {
					c, g := newCore(t, w.opts)
					rec := newRecorder()
					outs[fe.name] = fe.run(t, c, g, tok, llmConfig(w.opts), w.requests(), rec)
					a := rec.snapshot()
					aggs[fe.name] = a
					t.Logf("records %d (with outputs %d), preemptions %d, cached %d, max running %d", a.Records, a.IterRecords, a.Preemptions, a.PromptCached, a.MaxRunning)
					checkCase6(t, w, a, outs[fe.name])
				})
			}
			if len(aggs) != 2 {
				return
			}
			s, as := aggs["sync"], aggs["async"]
			for _, c := range []struct {
				name        string
				sync, async any
			}{
				{"prompt tokens", s.PromptTokens, as.PromptTokens},
				{"generation tokens", s.GenTokens, as.GenTokens},
				{"finished by reason", s.Finished, as.Finished},
				{"TTFT observations", s.TTFT, as.TTFT},
				{"ITL observations", s.ITL, as.ITL},
				{"iteration tokens sum", s.IterTokensSum, as.IterTokensSum},
				{"n params", s.NParams, as.NParams},
				{"max generation tokens", sorted(s.MaxGenTokens), sorted(as.MaxGenTokens)},
				{"client aborts", s.ClientAborts, as.ClientAborts},
			} {
				if fmt.Sprint(c.sync) != fmt.Sprint(c.async) {
					t.Errorf("%s: sync %v, async %v", c.name, c.sync, c.async)
				}
			}
			for _, id := range slices.Sorted(maps.Keys(outs["sync"])) {
				sr, ar := outs["sync"][id], outs["async"][id]
				if ar == nil || !slices.Equal(sr.text, ar.text) || fmt.Sprint(sr.tokens) != fmt.Sprint(ar.tokens) {
					t.Errorf("%s: sync output %q differs from async %q", id, sr.text, ar.text)
				}
			}
		})
	}
}

func sorted(s []int) []int { return slices.Sorted(slices.Values(s)) }

func checkCase6(t *testing.T, w workload, a aggregate, res map[string]*result) {
	t.Helper()
	n, p, m := w.n, w.p, w.m
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"prompt tokens", a.PromptTokens, n * p},
		{"prompt computed + cached", a.PromptComputed + a.PromptCached, n * p},
		{"generation tokens", a.GenTokens, n * m},
		{"finished (length)", a.Finished[stats.FinishLength], n},
		{"finished (all reasons)", sumReasons(a.Finished), n},
		{"TTFT observations", a.TTFT, n},
		{"ITL observations", a.ITL, n * (m - 1)},
		{"iteration tokens sum", a.IterTokensSum, a.PromptTokens + a.GenTokens},
		{"request_params_n observations", len(a.NParams), n},
		{"request_params_n sum", sum(a.NParams), n},
		{"max generation tokens sum", sum(a.MaxGenTokens), n * m},
		{"client aborts", a.ClientAborts, 0},
		{"running after the last step", a.Last.NumRunningReqs, 0},
		{"waiting after the last step", a.Last.NumWaitingReqs, 0},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if a.Last.KVCacheUsage != 0 {
		t.Errorf("kv cache usage after the last step = %g, want 0", a.Last.KVCacheUsage)
	}
	if a.IterTokensCount > n*m {
		t.Errorf("iterations with outputs = %d > N·M = %d", a.IterTokensCount, n*m)
	}
	if w.shared && a.PromptCached == 0 {
		t.Errorf("shared prompts found no prefix-cache hits")
	}
	if w.opts.numBlocks > 0 && a.Preemptions == 0 {
		t.Errorf("the tiny KV cache caused no preemption (max KV usage %g)", a.MaxKVUsage)
	}
	for _, f := range a.FinishedStats {
		if f.InferenceTime != f.PrefillTime+f.DecodeTime {
			t.Errorf("inference %v != prefill %v + decode %v", f.InferenceTime, f.PrefillTime, f.DecodeTime)
		}
		if f.E2ELatency < f.QueuedTime+f.InferenceTime {
			t.Errorf("e2e %v < queue %v + inference %v (one process, one monotonic clock)", f.E2ELatency, f.QueuedTime, f.InferenceTime)
		}
		if f.NumPromptTokens != p || f.NumGenerationTokens != m || f.MaxTokensParam != m {
			t.Errorf("finished stats %+v", f)
		}
		if m > 1 && f.DecodeTime > 0 && f.MeanTimePerOutputToken != f.DecodeTime/time.Duration(m-1) {
			t.Errorf("TPOT %v != decode %v / %d", f.MeanTimePerOutputToken, f.DecodeTime, m-1)
		}
	}
	if len(res) != n {
		t.Fatalf("%d results, want %d", len(res), n)
	}
	for id, r := range res {
		if len(r.tokens) != 1 || len(r.tokens[0]) != m || r.finish[0] != stats.FinishLength {
			t.Errorf("%s: %d sequences, tokens %v, finish %v", id, len(r.tokens), r.tokens, r.finish)
		}
	}
}

func sum(s []int) int {
	t := 0
	for _, v := range s {
		t += v
	}
	return t
}

func sumReasons(m map[stats.FinishReason]int) int { return sum(slices.Collect(maps.Values(m))) }

// TestParallelSamplingBothFrontEnds: with n > 1, every sequence is a
// finished request (request_success counts sequences) while n and the
// maximum generation tokens are observed once per user request.
func TestParallelSamplingBothFrontEnds(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	const users, n, p, m = 3, 3, 6, 5
	reqs := make([]Request, users)
	for i := range reqs {
		params := forced(m)
		params.N = n
		reqs[i] = Request{ID: fmt.Sprintf("par-%d", i), PromptTokenIDs: prompt(i, p), Params: params}
	}
	texts := map[string]map[string][]string{}
	for _, fe := range frontEnds {
		t.Run(fe.name, func(t *testing.T) {
			c, g := newCore(t, coreOpts{})
			rec := newRecorder()
			res := fe.run(t, c, g, tok, DefaultConfig(), reqs, rec)
			a := rec.snapshot()
			if a.Finished[stats.FinishLength] != users*n || a.PromptTokens != users*n*p || a.GenTokens != users*n*m {
				t.Errorf("finished %v, prompt %d, generation %d", a.Finished, a.PromptTokens, a.GenTokens)
			}
			if !slices.Equal(a.NParams, []int{n, n, n}) || !slices.Equal(a.MaxGenTokens, []int{m, m, m}) {
				t.Errorf("per-user observations: n %v, max gen %v", a.NParams, a.MaxGenTokens)
			}
			texts[fe.name] = map[string][]string{}
			for id, r := range res {
				if len(r.text) != n {
					t.Fatalf("%s: %d sequences", id, len(r.text))
				}
				for i := range n {
					if len(r.tokens[i]) != m || r.finish[i] != stats.FinishLength {
						t.Errorf("%s[%d]: %d tokens, finish %v", id, i, len(r.tokens[i]), r.finish[i])
					}
				}
				if slices.Equal(r.tokens[0], r.tokens[1]) {
					t.Errorf("%s: sequences 0 and 1 are identical", id)
				}
				texts[fe.name][id] = r.text
			}
		})
	}
	if fmt.Sprint(texts["sync"]) != fmt.Sprint(texts["async"]) {
		t.Errorf("sync and async outputs differ")
	}
}

// TestPreemptionKeepsOutputs: on the async engine a KV cache too small for
// the batch preempts requests, and every output still equals the sync run
// with ample KV (recompute after preemption is invisible to the client).
func TestPreemptionKeepsOutputs(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	w := workload{n: 8, p: 12, m: 40}
	c, g := newCore(t, coreOpts{})
	ref := runSync(t, c, g, tok, llmConfig(coreOpts{}), w.requests())

	tiny := coreOpts{numBlocks: 24, blockSize: 4, maxModelLen: 96}
	c, g = newCore(t, tiny)
	rec := newRecorder()
	got := runAsync(t, c, g, tok, llmConfig(tiny), w.requests(), rec)
	a := rec.snapshot()
	if a.Preemptions == 0 {
		t.Fatalf("no preemption (max running %d, max KV usage %g)", a.MaxRunning, a.MaxKVUsage)
	}
	t.Logf("%d preemptions", a.Preemptions)
	for id, r := range ref {
		if !slices.Equal(r.text, got[id].text) || fmt.Sprint(r.tokens) != fmt.Sprint(got[id].tokens) {
			t.Errorf("%s: output after preemption %q, want %q", id, got[id].text, r.text)
		}
	}
}

// TestEveryStepRecorded: the seam records every step, including the
// stats-only snapshot after the last request left (vLLM's sync engine
// drops steps without outputs; govllm's two front ends do not).
func TestEveryStepRecorded(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	const m = 5
	for _, fe := range frontEnds {
		t.Run(fe.name, func(t *testing.T) {
			c, g := newCore(t, coreOpts{})
			rec := newRecorder()
			fe.run(t, c, g, tok, llmConfig(coreOpts{}), []Request{{ID: "one", PromptTokenIDs: prompt(0, 4), Params: forced(m)}}, rec)
			a := rec.snapshot()
			if a.IterRecords != m || a.StatsOnly < 1 || !a.LastStatsOnly {
				t.Errorf("records: %d with outputs (want %d), %d stats-only (want ≥ 1), last stats-only %v", a.IterRecords, m, a.StatsOnly, a.LastStatsOnly)
			}
			if a.Last != (stats.SchedulerStats{}) {
				t.Errorf("last snapshot %+v, want all zero", a.Last)
			}
		})
	}
}
