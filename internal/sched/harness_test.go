package sched_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"govllm/internal/core"
	"govllm/internal/kvcache"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// harness drives a Scheduler step by step with an executor and records
// everything the scheduler emits.
type harness struct {
	t    testing.TB
	s    *sched.Scheduler
	kv   *kvcache.Manager
	exec core.Executor
	tick time.Time

	tokens   map[sched.RequestID][]int32
	finished map[sched.RequestID]sched.CoreOutput
	events   map[sched.RequestID][]stats.Event
	prefill  map[sched.RequestID]*stats.PrefillStats
	outputs  map[sched.RequestID]int // number of CoreOutputs seen
	stats    []*stats.SchedulerStats
	plans    []string // one line per step: "a:0+4* b:4+1"
}

type harnessOpts struct {
	sched sched.Config
	kv    kvcache.Config
	exec  core.Executor // default: FakeExecutor checking KV
}

func defaultOpts() harnessOpts {
	sc := sched.DefaultConfig()
	sc.MaxModelLen = 256
	sc.MaxNumBatchedTokens = 256
	sc.MaxNumSeqs = 16
	return harnessOpts{
		sched: sc,
		kv:    kvcache.Config{NumBlocks: 64, BlockSize: 4, EnablePrefixCaching: true},
	}
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	kv, err := kvcache.NewManager(o.kv)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sched.New(o.sched, kv)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, s: s, kv: kv, exec: o.exec,
		tick:     time.Unix(1000, 0),
		tokens:   map[sched.RequestID][]int32{},
		finished: map[sched.RequestID]sched.CoreOutput{},
		events:   map[sched.RequestID][]stats.Event{},
		prefill:  map[sched.RequestID]*stats.PrefillStats{},
		outputs:  map[sched.RequestID]int{},
	}
	if h.exec == nil {
		h.exec = &core.FakeExecutor{Vocab: 500, NumBlocks: o.kv.NumBlocks, BlockSize: o.kv.BlockSize}
	}
	// A deterministic clock: every reading is 1ms later than the previous.
	s.SetClock(func() time.Time {
		h.tick = h.tick.Add(time.Millisecond)
		return h.tick
	})
	return h
}

func prompt(base, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(base + i)
	}
	return p
}

func params(maxTokens int) sampling.Params {
	p := sampling.Default()
	p.MaxTokens = maxTokens
	return p
}

func (h *harness) add(id string, prompt []int32, maxTokens int) {
	h.t.Helper()
	h.addReq(sched.EngineRequest{ID: sched.RequestID(id), PromptTokenIDs: prompt, Params: params(maxTokens), EOSTokenID: -1})
}

func (h *harness) addReq(r sched.EngineRequest) {
	h.t.Helper()
	if err := h.s.AddRequest(r); err != nil {
		h.t.Fatal(err)
	}
}

// step runs one schedule/execute/update round and returns the plan line.
func (h *harness) step() (string, sched.CoreOutputs) {
	h.t.Helper()
	so := h.s.Schedule()
	var parts []string
	for _, r := range so.Requests {
		star := ""
		if r.Sample {
			star = "*"
		}
		parts = append(parts, fmt.Sprintf("%s:%d+%d%s", r.ID, r.Start, len(r.TokenIDs), star))
	}
	plan := strings.Join(parts, " ")
	h.checkPlan(so)
	var ro *sched.RunnerOutput
	if len(so.Requests) > 0 {
		var err error
		ro, err = h.exec.Execute(context.Background(), so)
		if err != nil {
			h.t.Fatalf("step %d: execute: %v", len(h.plans), err)
		}
		if err := sched.CheckRunnerOutput(so, ro); err != nil {
			h.t.Fatal(err)
		}
	}
	outs := h.s.UpdateFromOutput(so, ro)
	if outs.SchedulerStats == nil {
		h.t.Fatal("no SchedulerStats")
	}
	for _, o := range outs.Outputs {
		h.outputs[o.ReqID]++
		h.tokens[o.ReqID] = append(h.tokens[o.ReqID], o.NewTokenIDs...)
		h.events[o.ReqID] = append(h.events[o.ReqID], o.Events...)
		if o.PrefillStats != nil {
			if h.prefill[o.ReqID] != nil {
				h.t.Fatalf("%s: PrefillStats delivered twice", o.ReqID)
			}
			h.prefill[o.ReqID] = o.PrefillStats
		}
		if o.FinishReason != stats.FinishNone {
			if _, dup := h.finished[o.ReqID]; dup {
				h.t.Fatalf("%s finished twice", o.ReqID)
			}
			h.finished[o.ReqID] = o
		}
	}
	h.stats = append(h.stats, outs.SchedulerStats)
	h.plans = append(h.plans, plan)
	if err := h.s.CheckInvariants(); err != nil {
		h.t.Fatalf("step %d: %v", len(h.plans), err)
	}
	return plan, outs
}

// run steps until no request is left (bounded).
func (h *harness) run() {
	h.t.Helper()
	for i := 0; h.s.HasRequests() || h.s.HasPendingOutputs(); i++ {
		if i > 10000 {
			h.t.Fatal("no progress after 10000 steps")
		}
		h.step()
	}
}

// checkDrained asserts the end state of every scenario: all blocks free
// and the last snapshot's gauges at zero.
func (h *harness) checkDrained() {
	h.t.Helper()
	if h.s.HasRequests() {
		h.t.Fatalf("requests left: running %d waiting %d", h.s.NumRunning(), h.s.NumWaiting())
	}
	if free, total := h.kv.NumFreeBlocks(), h.kv.NumBlocks(); free != total {
		h.t.Fatalf("free blocks %d, total %d", free, total)
	}
	_, outs := h.step() // the extra stats-only step
	st := outs.SchedulerStats
	if len(outs.Outputs) != 0 || st.NumRunningReqs != 0 || st.NumWaitingReqs != 0 || st.KVCacheUsage != 0 {
		h.t.Fatalf("final snapshot not zero: %d outputs, %+v", len(outs.Outputs), *st)
	}
}

func (h *harness) eventTypes(id string) []stats.EventType {
	var ts []stats.EventType
	for _, e := range h.events[sched.RequestID(id)] {
		ts = append(ts, e.Type)
	}
	return ts
}

// reference runs the same requests alone with a large KV cache and returns
// each one's output tokens: preemption, chunking and batching must not
// change them.
func reference(t testing.TB, reqs []sched.EngineRequest) map[sched.RequestID][]int32 {
	t.Helper()
	want := map[sched.RequestID][]int32{}
	for _, r := range reqs {
		o := defaultOpts()
		o.kv.NumBlocks = 1024
		o.sched.MaxModelLen = 1024
		o.sched.MaxNumBatchedTokens = 1024
		h := newHarness(t, o)
		h.addReq(r)
		h.run()
		want[r.ID] = h.tokens[r.ID]
	}
	return want
}

func (h *harness) checkTokens(want map[sched.RequestID][]int32) {
	h.t.Helper()
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if got := h.tokens[id]; !slices.Equal(got, want[id]) {
			h.t.Errorf("%s: tokens %v, want %v", id, got, want[id])
		}
	}
}

// checkPlan: the step respects the budget and MaxNumSeqs, names each
// request once, and TotalNumScheduledTokens adds up.
func (h *harness) checkPlan(so *sched.SchedulerOutput) {
	h.t.Helper()
	cfg := h.s.Config()
	total := 0
	seen := map[sched.RequestID]bool{}
	for _, r := range so.Requests {
		if seen[r.ID] || len(r.TokenIDs) == 0 {
			h.t.Fatalf("bad plan entry %s (%d tokens, seen %v)", r.ID, len(r.TokenIDs), seen[r.ID])
		}
		seen[r.ID] = true
		total += len(r.TokenIDs)
		if t := cfg.LongPrefillTokenThreshold; t > 0 && len(r.TokenIDs) > t {
			h.t.Fatalf("%s: %d tokens over the long-prefill threshold %d", r.ID, len(r.TokenIDs), t)
		}
	}
	if total != so.TotalNumScheduledTokens || total > cfg.MaxNumBatchedTokens || len(so.Requests) > cfg.MaxNumSeqs {
		h.t.Fatalf("plan: %d tokens (reported %d, budget %d), %d requests (max %d)",
			total, so.TotalNumScheduledTokens, cfg.MaxNumBatchedTokens, len(so.Requests), cfg.MaxNumSeqs)
	}
}
