package sched_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// tinyKV: 6 blocks of 4 tokens; two requests of 4 + 14 tokens cannot both
// finish without a preemption.
func tinyKV(policy sched.Policy) harnessOpts {
	o := defaultOpts()
	o.kv.NumBlocks = 6
	o.sched.MaxModelLen = 24
	o.sched.MaxNumBatchedTokens = 24
	o.sched.MaxNumSeqs = 4
	o.sched.Policy = policy
	return o
}

// preemptionScenario: "old" (priority 5) starts alone; "new" (priority 0)
// arrives one step later. FCFS preempts the newest running request, new;
// Priority preempts the lowest priority, old, although it is older.
func preemptionScenario(t *testing.T, h *harness) []sched.EngineRequest {
	reqs := []sched.EngineRequest{
		{ID: "old", PromptTokenIDs: prompt(0, 4), Params: params(14), EOSTokenID: -1, Priority: 5},
		{ID: "new", PromptTokenIDs: prompt(50, 4), Params: params(14), EOSTokenID: -1, Priority: 0},
	}
	h.addReq(reqs[0])
	h.step()
	h.addReq(reqs[1])
	return reqs
}

// firstVictim steps until someone is preempted and returns who.
func firstVictim(t *testing.T, h *harness) sched.RequestID {
	t.Helper()
	for range 100 {
		h.step()
		for _, id := range []sched.RequestID{"old", "new"} {
			if r, ok := h.s.Request(id); ok && r.Status == sched.StatusPreempted {
				if r.NumPreemptions != 1 || r.NumComputedTokens != 0 {
					t.Fatalf("%s: preemptions %d, computed %d", id, r.NumPreemptions, r.NumComputedTokens)
				}
				if h.kv.BlockTable(string(id)) != nil {
					t.Fatalf("%s keeps blocks after preemption", id)
				}
				return id
			}
		}
	}
	t.Fatal("nobody was preempted")
	return ""
}

func TestPreemption(t *testing.T) {
	tests := []struct {
		policy     sched.Policy
		wantVictim sched.RequestID
	}{
		{sched.FCFS, "new"},
		{sched.Priority, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			h := newHarness(t, tinyKV(tt.policy))
			reqs := preemptionScenario(t, h)
			victim := firstVictim(t, h)
			if victim != tt.wantVictim {
				t.Fatalf("preempted %s, want %s", victim, tt.wantVictim)
			}
			// The victim's PREEMPTED rides on its next output, after it was
			// rescheduled.
			nOut := h.outputs[victim]
			h.run()
			if got := h.eventTypes(string(victim)); !slices.Contains(got, stats.EventPreempted) {
				t.Fatalf("%s events %v: no PREEMPTED", victim, got)
			}
			if h.outputs[victim] <= nOut {
				t.Fatal("victim produced no output after resuming")
			}
			// Resumption recomputes and continues: same tokens as alone.
			h.checkTokens(reference(t, reqs))
			for _, r := range reqs {
				if h.finished[r.ID].FinishReason != stats.FinishLength {
					t.Errorf("%s finished %v", r.ID, h.finished[r.ID].FinishReason)
				}
			}
			h.checkDrained()
		})
	}
}

// TestEventsOrder: per request, events are QUEUED, SCHEDULED, then pairs
// of PREEMPTED, SCHEDULED, with non-decreasing stamps; PREEMPTED arrives
// on the output right after the request resumed.
func TestEventsOrder(t *testing.T) {
	h := newHarness(t, tinyKV(sched.FCFS))
	preemptionScenario(t, h)
	victim := firstVictim(t, h)
	var resumed []stats.Event
	for h.s.HasRequests() {
		_, outs := h.step()
		for _, o := range outs.Outputs {
			if o.ReqID == victim && resumed == nil && len(o.Events) > 0 {
				resumed = o.Events
			}
		}
	}
	if len(resumed) != 2 || resumed[0].Type != stats.EventPreempted || resumed[1].Type != stats.EventScheduled {
		t.Fatalf("victim's next output events %v, want PREEMPTED, SCHEDULED", resumed)
	}
	for id, evs := range h.events {
		if len(evs) < 2 || evs[0].Type != stats.EventQueued || evs[1].Type != stats.EventScheduled {
			t.Fatalf("%s: events %v", id, evs)
		}
		for i := 2; i < len(evs); i += 2 {
			if evs[i].Type != stats.EventPreempted || i+1 >= len(evs) || evs[i+1].Type != stats.EventScheduled {
				t.Fatalf("%s: events %v", id, evs)
			}
		}
		for i := 1; i < len(evs); i++ {
			if evs[i].Time.Before(evs[i-1].Time) {
				t.Fatalf("%s: event %d at %v before %v", id, i, evs[i].Time, evs[i-1].Time)
			}
		}
	}
	h.checkDrained()
}

// TestPreemptedResumeHitsPrefixCache: the resumed request's lookup is
// recorded as a preempted query and hits its own cached blocks.
func TestPreemptedResumeHitsPrefixCache(t *testing.T) {
	h := newHarness(t, tinyKV(sched.FCFS))
	preemptionScenario(t, h)
	firstVictim(t, h)
	var pre stats.PrefixCacheStats
	for h.s.HasRequests() {
		_, outs := h.step()
		st := outs.SchedulerStats.PrefixCacheStats
		pre.PreemptedRequests += st.PreemptedRequests
		pre.PreemptedQueries += st.PreemptedQueries
		pre.PreemptedHits += st.PreemptedHits
	}
	if pre.PreemptedRequests == 0 || pre.PreemptedHits == 0 {
		t.Fatalf("preempted stats %+v: expected preempted lookups with hits", pre)
	}
	h.checkDrained()
}

func TestAbort(t *testing.T) {
	tests := []struct {
		name string
		// setup runs steps and returns the id to abort.
		setup      func(h *harness) sched.RequestID
		wantEvents []stats.EventType
	}{
		{
			name: "waiting",
			setup: func(h *harness) sched.RequestID {
				h.add("a", prompt(0, 6), 4)
				return "a"
			},
			wantEvents: []stats.EventType{stats.EventQueued},
		},
		{
			name: "running mid chunked prefill",
			setup: func(h *harness) sched.RequestID {
				h.add("a", prompt(0, 40), 4)
				h.step()
				return "a"
			},
			wantEvents: []stats.EventType{stats.EventQueued, stats.EventScheduled},
		},
		{
			name: "running decoding",
			setup: func(h *harness) sched.RequestID {
				h.add("a", prompt(0, 6), 8)
				h.step()
				h.step()
				return "a"
			},
			wantEvents: nil, // delivered with its earlier outputs
		},
		{
			name: "preempted",
			setup: func(h *harness) sched.RequestID {
				preemptionScenario(h.t.(*testing.T), h)
				return firstVictim(h.t.(*testing.T), h)
			},
			wantEvents: []stats.EventType{stats.EventPreempted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOpts()
			o.sched.MaxNumBatchedTokens = 16
			o.sched.MaxNumSeqs = 4
			if tt.name == "preempted" {
				o = tinyKV(sched.FCFS)
			}
			h := newHarness(t, o)
			id := tt.setup(h)
			r, ok := h.s.Request(id)
			if !ok {
				t.Fatal("request not found")
			}
			held := len(h.kv.BlockTable(string(id)))
			free := h.kv.NumFreeBlocks()
			h.s.Abort(id, "unknown")
			if got := h.kv.NumFreeBlocks(); got != free+held {
				t.Fatalf("free blocks %d after abort, want %d", got, free+held)
			}
			if r.Status != sched.StatusFinished || r.FinishReason != stats.FinishAbort {
				t.Fatalf("status %v reason %v", r.Status, r.FinishReason)
			}
			if _, ok := h.s.Request(id); ok {
				t.Fatal("aborted request still known")
			}
			h.s.Abort(id) // twice: no second output
			if err := h.s.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			_, outs := h.step()
			o0 := outs.Outputs[0]
			if o0.ReqID != id || o0.FinishReason != stats.FinishAbort || len(o0.NewTokenIDs) != 0 {
				t.Fatalf("first output %+v", o0)
			}
			var evs []stats.EventType
			for _, e := range o0.Events {
				evs = append(evs, e.Type)
			}
			if !slices.Equal(evs, tt.wantEvents) {
				t.Fatalf("abort output events %v, want %v", evs, tt.wantEvents)
			}
			h.run()
			if h.finished[id].FinishReason != stats.FinishAbort {
				t.Fatal("abort output not recorded once")
			}
			h.checkDrained()
		})
	}
}

func TestStopConditions(t *testing.T) {
	const eos = 2
	tests := []struct {
		name       string
		script     []int32
		mod        func(p *sampling.Params)
		eosID      int32
		promptLen  int
		wantTokens int
		wantReason stats.FinishReason
		wantStop   int32
	}{
		{"eos", []int32{7, 8, eos, 9}, nil, eos, 4, 3, stats.FinishStop, -1},
		{"eos ignored", []int32{7, eos, 8, 9, 10}, func(p *sampling.Params) { p.IgnoreEOS = true }, eos, 4, 5, stats.FinishLength, -1},
		{"no eos id", []int32{7, eos, 8, 9, 10}, nil, -1, 4, 5, stats.FinishLength, -1},
		{"eos before min tokens", []int32{eos, 7, eos, 9}, func(p *sampling.Params) { p.MinTokens = 2 }, eos, 4, 3, stats.FinishStop, -1},
		{"stop token", []int32{7, 40, 41}, func(p *sampling.Params) { p.StopTokenIDs = []int32{41, 40} }, eos, 4, 2, stats.FinishStop, 40},
		{"stop token before min tokens", []int32{40, 7, 40}, func(p *sampling.Params) { p.StopTokenIDs = []int32{40}; p.MinTokens = 3 }, eos, 4, 3, stats.FinishStop, 40},
		{"stop token with ignore eos", []int32{7, eos, 9}, func(p *sampling.Params) { p.IgnoreEOS = true; p.StopTokenIDs = []int32{eos} }, eos, 4, 2, stats.FinishStop, eos},
		{"max tokens", []int32{7, 8, 9, 10, 11, 12}, nil, eos, 4, 5, stats.FinishLength, -1},
		{"eos on the last allowed token is a stop", []int32{7, 8, 9, 10, eos}, nil, eos, 4, 5, stats.FinishStop, -1},
		{"max model len", []int32{7, 8, 9, 10, 11}, nil, eos, 14, 2, stats.FinishLength, -1},
		{"max tokens 1", []int32{7}, func(p *sampling.Params) { p.MaxTokens = 1 }, eos, 4, 1, stats.FinishLength, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOpts()
			o.sched.MaxModelLen = 16
			o.sched.MaxNumBatchedTokens = 16
			o.exec = scriptExec{"r": tt.script}
			h := newHarness(t, o)
			p := params(5)
			if tt.mod != nil {
				tt.mod(&p)
			}
			h.addReq(sched.EngineRequest{ID: "r", PromptTokenIDs: prompt(100, tt.promptLen), Params: p, EOSTokenID: tt.eosID})
			h.run()
			f := h.finished["r"]
			if got := h.tokens["r"]; !slices.Equal(got, tt.script[:tt.wantTokens]) {
				t.Fatalf("tokens %v, want %v", got, tt.script[:tt.wantTokens])
			}
			if f.FinishReason != tt.wantReason || f.StopReason != tt.wantStop {
				t.Fatalf("finish %v stop %d, want %v %d", f.FinishReason, f.StopReason, tt.wantReason, tt.wantStop)
			}
			h.checkDrained()
		})
	}
}

// TestRandomWorkload: many requests with shared prefixes on a small cache,
// random aborts, both policies; invariants every step, and every request
// that was not aborted produces exactly the tokens it produces alone.
func TestRandomWorkload(t *testing.T) {
	for _, policy := range []sched.Policy{sched.FCFS, sched.Priority} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprint(policy, "/", seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 99))
				o := defaultOpts()
				o.kv.NumBlocks = 24
				o.sched.MaxModelLen = 64
				o.sched.MaxNumBatchedTokens = 24
				o.sched.MaxNumSeqs = 6
				o.sched.Policy = policy
				h := newHarness(t, o)
				var reqs []sched.EngineRequest
				aborted := map[sched.RequestID]bool{}
				next := 0
				for step := 0; step < 400 && (next < 30 || h.s.HasRequests()); step++ {
					if next < 30 && rng.IntN(3) == 0 {
						p := append(prompt(1000*rng.IntN(3), 4*rng.IntN(4)), prompt(next*7, 1+rng.IntN(12))...)
						r := sched.EngineRequest{
							ID: sched.RequestID(fmt.Sprint("r", next)), PromptTokenIDs: p,
							Params: params(1 + rng.IntN(20)), EOSTokenID: -1, Priority: rng.IntN(3),
						}
						h.addReq(r)
						reqs = append(reqs, r)
						next++
					}
					if len(reqs) > 0 && rng.IntN(15) == 0 {
						id := reqs[rng.IntN(len(reqs))].ID
						if _, live := h.s.Request(id); live {
							aborted[id] = true
							h.s.Abort(id)
						}
					}
					h.step()
				}
				h.run()
				var kept []sched.EngineRequest
				for _, r := range reqs {
					f, ok := h.finished[r.ID]
					if !ok {
						t.Fatalf("%s never finished", r.ID)
					}
					if aborted[r.ID] != (f.FinishReason == stats.FinishAbort) {
						t.Fatalf("%s finish %v, aborted %v", r.ID, f.FinishReason, aborted[r.ID])
					}
					if !aborted[r.ID] {
						kept = append(kept, r)
					}
				}
				h.checkTokens(reference(t, kept))
				h.checkDrained()
			})
		}
	}
}
