package sched_test

import (
	"fmt"
	"slices"
	"testing"

	"govllm/internal/kvcache"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// withSuffix is shared followed by n tokens starting at base.
func withSuffix(shared []int32, base, n int) []int32 {
	return append(slices.Clone(shared), prompt(base, n)...)
}

// TestSameStepPrefixHits: requests admitted in one step share the full
// blocks of the requests admitted before them in that step, as in vLLM,
// which registers full blocks in the prefix cache when allocate_slots
// gives them out (cache_blocks up to computed + scheduled tokens). The
// expected hits are vLLM's: every later request hits the full blocks of
// the shared prefix, capped at its length − 1. The FakeExecutor fails if
// a request attends to a slot its writer has not filled, and the tokens
// must equal each request's run alone.
func TestSameStepPrefixHits(t *testing.T) {
	p57 := prompt(1000, 57)
	shared64 := prompt(2000, 64) // 4 blocks of 16
	long := prompt(3000, 100)
	tests := []struct {
		name      string
		prompts   [][]int32
		threshold int // long prefill threshold; 0 = none
		caching   bool
		wantPlan  string
		wantStats stats.PrefixCacheStats
	}{
		{
			// n=3 parallel sampling: three sequences of one 57-token prompt;
			// 3 full blocks = 48 tokens hit for each of the last two.
			name: "n=3 57-token prompt", prompts: [][]int32{p57, p57, p57}, caching: true,
			wantPlan:  "r0:0+57* r1:48+9* r2:48+9*",
			wantStats: stats.PrefixCacheStats{Requests: 3, Queries: 3 * 57, Hits: 96},
		},
		{
			name: "n=3 without prefix caching", prompts: [][]int32{p57, p57, p57},
			wantPlan: "r0:0+57* r1:0+57* r2:0+57*",
		},
		{
			name: "shared 4-block system prompt",
			prompts: [][]int32{withSuffix(shared64, 10, 10), withSuffix(shared64, 20, 5),
				withSuffix(shared64, 30, 30), withSuffix(shared64, 40, 1)},
			caching:   true,
			wantPlan:  "r0:0+74* r1:64+5* r2:64+30* r3:64+1*",
			wantStats: stats.PrefixCacheStats{Requests: 4, Queries: 74 + 69 + 94 + 65, Hits: 3 * 64},
		},
		{
			// Only the blocks of the chunk being computed are registered.
			name: "chunked prefill shares the scheduled chunk", prompts: [][]int32{long, long},
			threshold: 32, caching: true,
			wantPlan:  "r0:0+32 r1:32+32",
			wantStats: stats.PrefixCacheStats{Requests: 2, Queries: 200, Hits: 32},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOpts()
			o.kv = kvcache.Config{NumBlocks: 64, BlockSize: 16, EnablePrefixCaching: tt.caching}
			o.sched.LongPrefillTokenThreshold = tt.threshold
			h := newHarness(t, o)
			var reqs []sched.EngineRequest
			for i, p := range tt.prompts {
				reqs = append(reqs, sched.EngineRequest{ID: sched.RequestID(fmt.Sprintf("r%d", i)), PromptTokenIDs: p, Params: params(4), EOSTokenID: -1})
				h.addReq(reqs[i])
			}
			plan, outs := h.step()
			if st := outs.SchedulerStats.PrefixCacheStats; plan != tt.wantPlan || st != tt.wantStats {
				t.Fatalf("first step: plan %q, prefix stats %+v\nwant %q, %+v", plan, st, tt.wantPlan, tt.wantStats)
			}
			h.run()
			h.checkTokens(reference(t, reqs))
			h.checkDrained()
		})
	}
}

// TestPreemptedWriterLeavesNoHit: under the priority policy a request
// already scheduled in a step can be preempted later in that step; the
// blocks it registered for that step were never written, so they must
// leave the prefix cache (a later request with the same prompt hits only
// the blocks computed before), or the FakeExecutor reports a read of an
// unwritten slot.
func TestPreemptedWriterLeavesNoHit(t *testing.T) {
	o := defaultOpts()
	o.sched.Policy = sched.Priority
	o.sched.MaxModelLen = 40
	o.sched.LongPrefillTokenThreshold = 8
	o.kv = kvcache.Config{NumBlocks: 10, BlockSize: 4, EnablePrefixCaching: true}
	h := newHarness(t, o)
	low := prompt(100, 30)
	reqs := []sched.EngineRequest{
		{ID: "low", PromptTokenIDs: low, Params: params(2), EOSTokenID: -1, Priority: 1},
		{ID: "high", PromptTokenIDs: prompt(500, 12), Params: params(1), EOSTokenID: -1},
		{ID: "same", PromptTokenIDs: low, Params: params(2), EOSTokenID: -1, Priority: 2},
	}
	h.addReq(reqs[0])
	h.step() // low:0+8
	h.step() // low:8+8
	h.addReq(reqs[1])
	// Step 3 fills 8 of the 10 blocks. Step 4 schedules low:24+6, which
	// takes the last 2 blocks and registers its 7th block (tokens 24..27),
	// then high needs a block and preempts low, which leaves the plan;
	// high finishes.
	for _, want := range []string{"low:16+8 high:0+8", "high:8+4*"} {
		if plan, _ := h.step(); plan != want {
			t.Fatalf("plan %q, want %q (plans so far %q)", plan, want, h.plans)
		}
	}
	if got := h.eventTypes("low"); len(got) != 0 || h.s.NumWaiting() != 1 {
		t.Fatalf("low was not preempted: events %v, %d waiting", got, h.s.NumWaiting())
	}
	h.addReq(reqs[2])
	// low comes back with the 6 blocks computed before the preemption, and
	// same, behind it in the step, hits them and low's 7th block too.
	want := stats.PrefixCacheStats{Requests: 1, Queries: 30, Hits: 28, PreemptedRequests: 1, PreemptedQueries: 30, PreemptedHits: 24}
	if plan, outs := h.step(); plan != "low:24+6* same:28+2*" || outs.SchedulerStats.PrefixCacheStats != want {
		t.Fatalf("plan %q, prefix stats %+v; want low:24+6* same:28+2*, %+v", plan, outs.SchedulerStats.PrefixCacheStats, want)
	}
	h.run()
	h.checkTokens(reference(t, reqs))
	h.checkDrained()
}

// TestAbandonedStepSharesNothing: when the executor did not run a step,
// the blocks it registered hold no KV. A request that hit them in that
// step goes back to the waiting queue (with one SCHEDULED event in the
// end), so it computes its prompt itself once the writer is gone.
func TestAbandonedStepSharesNothing(t *testing.T) {
	o := defaultOpts()
	o.kv = kvcache.Config{NumBlocks: 64, BlockSize: 16, EnablePrefixCaching: true}
	h := newHarness(t, o)
	p := prompt(7, 57)
	h.add("a", p, 3)
	h.add("b", p, 3)
	so := h.s.Schedule()
	if len(so.Requests) != 2 || so.Requests[1].Start != 48 {
		t.Fatalf("plan %+v, want a then b from 48", so.Requests)
	}
	h.s.AbandonStep(so)
	if err := h.s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if h.s.NumRunning() != 1 || h.s.NumWaiting() != 1 || h.kv.NumCachedBlocks() != 0 {
		t.Fatalf("after abandoning: %d running, %d waiting, %d cached blocks; want 1, 1, 0",
			h.s.NumRunning(), h.s.NumWaiting(), h.kv.NumCachedBlocks())
	}
	h.s.Abort("a")
	if plan, _ := h.step(); plan != "b:0+57*" {
		t.Fatalf("plan after the abort %q, want b:0+57*", plan)
	}
	h.run()
	if got := h.eventTypes("b"); !slices.Equal(got, []stats.EventType{stats.EventQueued, stats.EventScheduled}) {
		t.Fatalf("b's events %v", got)
	}
	if ps := h.prefill["b"]; ps == nil || *ps != (stats.PrefillStats{NumPromptTokens: 57, NumComputedTokens: 57}) {
		t.Fatalf("b's prefill stats %+v", ps)
	}
	h.checkTokens(reference(t, []sched.EngineRequest{{ID: "b", PromptTokenIDs: p, Params: params(3), EOSTokenID: -1}}))
	h.checkDrained()
}
