package runner_test

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"govllm/internal/core"
	"govllm/internal/kvcache"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// engineSetup is one engine configuration of the invariance test.
type engineSetup struct {
	name         string
	prefixCache  bool
	tokenBudget  int
	numBlocks    int
	blockSize    int
	maxNumSeqs   int
	maxModelLen  int  // 0 means 96
	wantPreempt  bool // assert that the batch run preempted at least once
	wantCacheHit bool // assert that the batch run hit the prefix cache
}

// runResult is what one engine run produced.
type runResult struct {
	tokens      map[sched.RequestID][]int32
	preemptions int
	cacheHits   int
	steps       int
}

// runEngine feeds reqs to a fresh core.Engine over r and steps until every
// request finished with FinishLength.
func runEngine(t *testing.T, r *runner.Runner, es engineSetup, reqs []sched.EngineRequest) runResult {
	t.Helper()
	eng, err := core.New(core.Config{
		Sched: sched.Config{
			MaxNumSeqs: es.maxNumSeqs, MaxNumBatchedTokens: es.tokenBudget, MaxModelLen: cmp.Or(es.maxModelLen, 96),
			Policy: sched.FCFS, EnableChunkedPrefill: true,
		},
		KV: kvcache.Config{NumBlocks: es.numBlocks, BlockSize: es.blockSize, EnablePrefixCaching: es.prefixCache},
	}, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, rq := range reqs {
		if err := eng.AddRequest(rq); err != nil {
			t.Fatal(err)
		}
	}
	res := runResult{tokens: map[sched.RequestID][]int32{}}
	finished := 0
	for eng.HasWork() {
		if res.steps++; res.steps > 100000 {
			t.Fatal("engine does not finish")
		}
		co, err := eng.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		res.cacheHits += co.SchedulerStats.PrefixCacheStats.Hits + co.SchedulerStats.PrefixCacheStats.PreemptedHits
		for _, o := range co.Outputs {
			res.tokens[o.ReqID] = append(res.tokens[o.ReqID], o.NewTokenIDs...)
			for _, ev := range o.Events {
				if ev.Type == stats.EventPreempted {
					res.preemptions++
				}
			}
			if o.FinishReason != stats.FinishNone {
				if o.FinishReason != stats.FinishLength {
					t.Fatalf("%s finished with %v, want length", o.ReqID, o.FinishReason)
				}
				finished++
			}
		}
	}
	if finished != len(reqs) {
		t.Fatalf("%d of %d requests finished", finished, len(reqs))
	}
	return res
}

// invarianceRequests builds n requests with prompt lengths 2..68 (BOS
// first, random ids below vocab from a fixed seed); in the second half, every other
// request starts with the first 40 tokens of request i-n/2 so that, with at
// most n/2 running, the prefix cache has something to find.
func invarianceRequests(n, maxTokens, vocab int, params func(i int) sampling.Params) []sched.EngineRequest {
	rng := sampling.NewRNG(2024)
	var reqs []sched.EngineRequest
	for i := range n {
		plen := 2 + (i*29)%67
		prompt := []int32{1}
		if h := n / 2; i >= h && i%2 == 0 {
			prompt = slices.Clone(reqs[i-h].PromptTokenIDs[:min(40, len(reqs[i-h].PromptTokenIDs))])
		}
		for len(prompt) < plen {
			prompt = append(prompt, int32(3+rng.Uint64()%uint64(vocab-3)))
		}
		p := params(i)
		p.MaxTokens = maxTokens
		p.IgnoreEOS = true
		reqs = append(reqs, sched.EngineRequest{
			ID: sched.RequestID(fmt.Sprintf("req-%02d", i)), PromptTokenIDs: prompt, Params: p, EOSTokenID: 2,
		})
	}
	return reqs
}

var (
	greedyParams = func(int) sampling.Params {
		p := sampling.Default()
		p.Temperature = 0
		return p
	}
	seededParams = func(i int) sampling.Params {
		p := sampling.Default()
		p.Temperature = 0.8
		p.Seed = new(int64(1000 + i))
		return p
	}
)

// TestBatchInvariance runs 32 requests alone and then all together through
// core.Engine + Runner on stories260K and requires token-identical outputs
// (the batch under every setup equals the same single-request runs),
// with prefix caching on and off, a tiny token budget (chunked prefill) and
// a KV cache small enough to force preemptions; greedy and seeded sampling.
func TestBatchInvariance(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	m, err := model.Load(filepath.Join(dir, "stories260K.gguf"), model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setups := []engineSetup{
		// Every request is admitted in the first step: the hits are on
		// blocks that step computes (shared within the step, as in vLLM).
		{name: "prefix cache on", prefixCache: true, tokenBudget: 2048, numBlocks: 256, blockSize: 16, maxNumSeqs: 64, wantCacheHit: true},
		{name: "prefix cache hits", prefixCache: true, tokenBudget: 2048, numBlocks: 256, blockSize: 16, maxNumSeqs: 16, wantCacheHit: true},
		{name: "prefix cache off", tokenBudget: 2048, numBlocks: 256, blockSize: 16, maxNumSeqs: 64},
		{name: "chunked prefill budget 16", prefixCache: true, tokenBudget: 16, numBlocks: 256, blockSize: 16, maxNumSeqs: 16},
		{name: "preemption", prefixCache: true, tokenBudget: 512, numBlocks: 64, blockSize: 8, maxNumSeqs: 32, wantPreempt: true},
		{name: "preemption without prefix cache", tokenBudget: 64, numBlocks: 48, blockSize: 8, maxNumSeqs: 32, wantPreempt: true},
	}
	checkInvariance(t, m, 32, 24, setups, "greedy", greedyParams)
	// Seeded sampling: the setups that reorder work the most.
	checkInvariance(t, m, 32, 24, []engineSetup{setups[0], setups[3], setups[4]}, "seeded temperature 0.8", seededParams)
}

// TestBatchInvarianceWideModel repeats the greedy check on a random-weight
// model wide enough (dim 288) for the SIMD matmul paths, F32 and Q8_0.
// Random weights give nearly flat logits, so a last-bit difference between
// batched and single rows would flip greedy choices.
func TestBatchInvarianceWideModel(t *testing.T) {
	cfg, err := model.DummyConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	setups := []engineSetup{
		{name: "prefix cache hits", prefixCache: true, tokenBudget: 2048, numBlocks: 256, blockSize: 16, maxNumSeqs: 4, wantCacheHit: true},
		{name: "chunked prefill and preemption", prefixCache: true, tokenBudget: 24, numBlocks: 16, blockSize: 8, maxNumSeqs: 8, wantPreempt: true},
	}
	for _, dt := range []struct {
		name string
		dt   tensor.DType
	}{{"F32", tensor.F32}, {"Q8_0", tensor.Q8_0}} {
		m := model.NewDummy(cfg, dt.dt, 7)
		checkInvariance(t, m, 12, 8, setups, dt.name+" greedy", greedyParams)
	}
}

// TestBatchInvarianceArchitectures repeats the greedy check on the
// synthetic model of every architecture family (shared/models/synthetic,
// Q8_0): biases, q/k norms, experts, fused tensors, and Gemma's soft-caps
// and sliding window of 32, which prompts of up to 68 tokens cross while
// chunked, cached and preempted.
func TestBatchInvarianceArchitectures(t *testing.T) {
	dir := testmodels.Dir(t, "synthetic")
	setups := []engineSetup{
		{name: "prefix cache hits", prefixCache: true, tokenBudget: 2048, numBlocks: 256, blockSize: 16, maxNumSeqs: 4, wantCacheHit: true},
		{name: "chunked prefill and preemption", prefixCache: true, tokenBudget: 24, numBlocks: 16, blockSize: 8, maxNumSeqs: 8, wantPreempt: true},
	}
	for _, arch := range []string{"qwen2", "qwen3", "qwen3moe", "phi3", "gemma2", "gemma3"} {
		m, err := model.Load(filepath.Join(dir, arch, arch+"-Q8_0.gguf"), model.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariance(t, m, 12, 8, setups, arch+" greedy", greedyParams)
	}
}

// checkInvariance computes every request's tokens alone (one request per
// fresh engine, the first setup's configuration), then runs all requests
// together under each setup and requires the same tokens.
func checkInvariance(t *testing.T, m *model.Model, n, maxTokens int, setups []engineSetup, name string, params func(int) sampling.Params) {
	pool := tensor.NewPool(2)
	defer pool.Close()
	reqs := invarianceRequests(n, maxTokens, m.Config.VocabSize, params)
	newRunner := func(t *testing.T, es engineSetup) *runner.Runner {
		r, err := runner.New(m, pool, runner.Config{
			NumBlocks: es.numBlocks, BlockSize: es.blockSize,
			MaxNumBatchedTokens: es.tokenBudget, MaxNumSeqs: es.maxNumSeqs, EOSTokenID: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	alone := map[sched.RequestID][]int32{}
	r := newRunner(t, setups[0])
	for _, rq := range reqs {
		res := runEngine(t, r, setups[0], []sched.EngineRequest{rq})
		alone[rq.ID] = res.tokens[rq.ID]
		if len(alone[rq.ID]) != maxTokens {
			t.Fatalf("%s alone produced %d tokens, want %d", rq.ID, len(alone[rq.ID]), maxTokens)
		}
	}
	for _, es := range setups {
		t.Run(name+"/"+es.name, func(t *testing.T) {
			batch := runEngine(t, newRunner(t, es), es, reqs)
			for _, rq := range reqs {
				if a, b := alone[rq.ID], batch.tokens[rq.ID]; !slices.Equal(a, b) {
					t.Errorf("%s (prompt %d tokens) differs in the batch:\nalone %v\nbatch %v", rq.ID, len(rq.PromptTokenIDs), a, b)
				}
			}
			if es.wantPreempt && batch.preemptions == 0 {
				t.Errorf("no PREEMPTED event in %d steps; the KV cache is not small enough", batch.steps)
			}
			if es.wantCacheHit && batch.cacheHits == 0 {
				t.Errorf("no prefix-cache hit in the batch run")
			}
			t.Logf("batch: %d steps, %d preemptions, %d cached tokens", batch.steps, batch.preemptions, batch.cacheHits)
		})
	}
}
