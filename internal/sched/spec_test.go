package sched_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"govllm/internal/core"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// guessDrafter proposes k tokens drawn from a hash of the sequence, in
// [0, vocab): with the fake executor's tiny vocabulary some are right, so
// steps accept none, some or all of their drafts.
type guessDrafter struct{ vocab int32 }

func (g guessDrafter) Propose(dst, tokens []int32, k int) []int32 {
	h := uint64(len(tokens))
	for _, t := range tokens {
		h = (h ^ uint64(t)) * 1099511628211
	}
	dst = dst[:0]
	for range k {
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		dst = append(dst, int32(h%uint64(g.vocab)))
	}
	return dst
}

// oracleDrafter knows the fake executor's tokens for request id.
type oracleDrafter struct {
	id    sched.RequestID
	vocab int32
}

func (o oracleDrafter) Propose(dst, tokens []int32, k int) []int32 {
	dst = dst[:0]
	prev := tokens[len(tokens)-1]
	for i := range k {
		prev = core.FakeToken(o.id, len(tokens)+i, prev, o.vocab)
		dst = append(dst, prev)
	}
	return dst
}

// wrongDrafter always proposes a token the fake executor never samples.
type wrongDrafter struct{ vocab int32 }

func (w wrongDrafter) Propose(dst, _ []int32, k int) []int32 {
	dst = dst[:0]
	for range k {
		dst = append(dst, w.vocab)
	}
	return dst
}

func specOpts(d sched.Drafter, k int, vocab int32) harnessOpts {
	o := defaultOpts()
	o.sched.Speculative = &sched.Speculative{Drafter: d, NumTokens: k}
	o.exec = &core.FakeExecutor{Vocab: vocab, NumBlocks: o.kv.NumBlocks, BlockSize: o.kv.BlockSize}
	return o
}

// specTotals sums the steps' speculative-decoding stats and checks each
// step's own consistency.
func specTotals(t *testing.T, h *harness, k int) stats.SpecDecodingStats {
	t.Helper()
	tot := stats.SpecDecodingStats{NumAcceptedPerPos: make([]int, k)}
	for i, st := range h.stats {
		sd := st.SpecDecoding
		if sd == nil {
			continue
		}
		sum := 0
		for p, n := range sd.NumAcceptedPerPos {
			sum += n
			if n > sd.NumDrafts || (p > 0 && n > sd.NumAcceptedPerPos[p-1]) {
				t.Fatalf("step %d: accepted per position %v of %d drafts", i, sd.NumAcceptedPerPos, sd.NumDrafts)
			}
		}
		if len(sd.NumAcceptedPerPos) != k || sum != sd.NumAcceptedTokens || sd.NumAcceptedTokens > sd.NumDraftTokens ||
			sd.NumDraftTokens > k*sd.NumDrafts || sd.NumDrafts == 0 {
			t.Fatalf("step %d: inconsistent spec stats %+v", i, *sd)
		}
		tot.NumDrafts += sd.NumDrafts
		tot.NumDraftTokens += sd.NumDraftTokens
		tot.NumAcceptedTokens += sd.NumAcceptedTokens
		for p, n := range sd.NumAcceptedPerPos {
			tot.NumAcceptedPerPos[p] += n
		}
	}
	return tot
}

// TestSpeculativeSameTokens: with drafts that are sometimes right, every
// request's tokens are those it has without speculation (the fake
// executor's tokens depend on the position and the previous token only),
// under preemption, prefix caching, chunked prefill, aborts, max_tokens
// and max_model_len; the fake executor's KV check catches a rejected
// draft's slot counted as computed; every block is free at the end.
func TestSpeculativeSameTokens(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			const vocab, k = 3, 4
			o := specOpts(sched.DraftFunc(guessDrafter{vocab}.Propose), k, vocab)
			o.kv.NumBlocks = 20
			o.exec = &core.FakeExecutor{Vocab: vocab, NumBlocks: o.kv.NumBlocks, BlockSize: o.kv.BlockSize}
			o.sched.MaxModelLen = 48
			o.sched.MaxNumBatchedTokens = 20
			o.sched.MaxNumSeqs = 5
			h := newHarness(t, o)
			var reqs []sched.EngineRequest
			for i := range 16 {
				p := append(prompt(1000*rng.IntN(2), 4*rng.IntN(3)), prompt(i*7, 1+rng.IntN(10))...)
				r := sched.EngineRequest{ID: sched.RequestID(fmt.Sprint("r", i)), PromptTokenIDs: p,
					Params: params(1 + rng.IntN(40)), EOSTokenID: -1}
				reqs = append(reqs, r)
			}
			for i, r := range reqs {
				h.addReq(r)
				if i%3 == 0 {
					h.step()
				}
			}
			h.run()
			h.checkTokens(fakeReference(t, reqs, o.sched, vocab))
			tot := specTotals(t, h, k)
			if tot.NumDrafts == 0 || tot.NumAcceptedTokens == 0 || tot.NumAcceptedTokens == tot.NumDraftTokens {
				t.Fatalf("the workload should accept some drafts and reject others: %+v", tot)
			}
			h.checkDrained()
		})
	}
}

// fakeReference runs each request alone without speculation on the fake
// executor of vocabulary vocab and returns its tokens.
func fakeReference(t *testing.T, reqs []sched.EngineRequest, sc sched.Config, vocab int32) map[sched.RequestID][]int32 {
	t.Helper()
	sc.Speculative = nil
	want := map[sched.RequestID][]int32{}
	for _, r := range reqs {
		ref := newHarness(t, harnessOpts{sched: sc, kv: defaultOpts().kv, exec: &core.FakeExecutor{Vocab: vocab}})
		ref.addReq(r)
		ref.run()
		want[r.ID] = ref.tokens[r.ID]
	}
	return want
}

// TestSpeculativeOracle: drafts that are always right make a request
// take about max_tokens/(k+1) steps, never past max_tokens, and every
// draft position counts as accepted.
func TestSpeculativeOracle(t *testing.T) {
	const vocab, k, maxTokens = 500, 4, 41
	h := newHarness(t, specOpts(sched.DraftFunc(oracleDrafter{"a", vocab}.Propose), k, vocab))
	r := sched.EngineRequest{ID: "a", PromptTokenIDs: prompt(10, 6), Params: params(maxTokens), EOSTokenID: -1}
	h.addReq(r)
	h.run()
	h.checkTokens(fakeReference(t, []sched.EngineRequest{r}, h.s.Config(), vocab))
	if got := len(h.tokens["a"]); got != maxTokens {
		t.Fatalf("%d tokens, want %d", got, maxTokens)
	}
	// One prefill step, then 40 tokens in steps of k+1 = 5.
	if want := 1 + (maxTokens-1+k)/(k+1); len(h.plans) != want {
		t.Fatalf("%d steps, want %d: %v", len(h.plans), want, h.plans)
	}
	tot := specTotals(t, h, k)
	if tot.NumAcceptedTokens != tot.NumDraftTokens || tot.NumAcceptedPerPos[k-1] != tot.NumDrafts {
		t.Fatalf("an oracle's drafts are all accepted: %+v", tot)
	}
	h.checkDrained()
}

// TestSpeculativeAdapts: drafts that are never right shrink to one token
// and then come ever more rarely, so a 200-token request drafts only a
// few dozen tokens; the tokens are unchanged and the rejected drafts'
// blocks are freed each step.
func TestSpeculativeAdapts(t *testing.T) {
	const vocab, k = 500, 4
	h := newHarness(t, specOpts(sched.DraftFunc(wrongDrafter{vocab}.Propose), k, vocab))
	h.s.Config()
	r := sched.EngineRequest{ID: "a", PromptTokenIDs: prompt(10, 6), Params: params(200), EOSTokenID: -1}
	h.addReq(r)
	for h.s.HasRequests() {
		h.step()
		if req, ok := h.s.Request("a"); ok {
			if got, most := len(h.kv.BlockTable("a")), h.kv.BlocksFor(req.NumTokens()); got > most {
				t.Fatalf("after step %d: %d blocks for %d tokens, want at most %d", len(h.plans), got, req.NumTokens(), most)
			}
		}
	}
	h.checkTokens(fakeReference(t, []sched.EngineRequest{r}, h.s.Config(), vocab))
	tot := specTotals(t, h, k)
	if tot.NumAcceptedTokens != 0 || tot.NumDraftTokens > 30 || tot.NumDraftTokens < 10 {
		t.Fatalf("never-right drafts: %+v (want 10…30 drafted, none accepted)", tot)
	}
	h.checkDrained()
}

// TestSpeculativeDraftLimits: a step's drafts fit the token budget (the
// harness checks every plan), the request's max_tokens and the model
// length.
func TestSpeculativeDraftLimits(t *testing.T) {
	const vocab, k = 500, 8
	o := specOpts(sched.DraftFunc(oracleDrafter{"a", vocab}.Propose), k, vocab)
	o.sched.MaxModelLen = 30
	o.sched.MaxNumBatchedTokens = 16
	o.sched.MaxNumSeqs = 4
	h := newHarness(t, o)
	h.addReq(sched.EngineRequest{ID: "a", PromptTokenIDs: prompt(10, 5), Params: params(100), EOSTokenID: -1})
	for h.s.HasRequests() {
		so := h.s.Schedule()
		for _, sr := range so.Requests {
			req, _ := h.s.Request(sr.ID)
			n := len(sr.SpecTokenIDs)
			if n > 0 && req.NumTokens()+n >= o.sched.MaxModelLen {
				t.Fatalf("%d drafts at %d tokens: past max model len %d", n, req.NumTokens(), o.sched.MaxModelLen)
			}
			if n > 0 && req.NumOutputTokens()+n >= req.Params.MaxTokens {
				t.Fatalf("%d drafts at %d outputs: past max tokens %d", n, req.NumOutputTokens(), req.Params.MaxTokens)
			}
		}
		h.s.AbandonStep(so)
		h.step()
	}
	if got := len(h.tokens["a"]); got != 30-5 {
		t.Fatalf("%d tokens, want %d (max model len)", got, 25)
	}
	if !slices.Equal(h.tokens["a"], fakeReference(t, []sched.EngineRequest{{ID: "a", PromptTokenIDs: prompt(10, 5), Params: params(100), EOSTokenID: -1}}, o.sched, vocab)["a"]) {
		t.Fatal("tokens differ from the run without drafts")
	}
}

// TestSpeculativeDraftsNotCached: rejected drafts are written to KV slots
// but never enter the prefix cache: requests whose prompts are earlier
// requests' whole sequences hit their blocks, and the fake executor
// checks every hit slot holds the right token.
func TestSpeculativeDraftsNotCached(t *testing.T) {
	const vocab, k = 3, 4
	o := specOpts(sched.DraftFunc(guessDrafter{vocab}.Propose), k, vocab)
	h := newHarness(t, o)
	var reqs []sched.EngineRequest
	for i := range 6 {
		r := sched.EngineRequest{ID: sched.RequestID(fmt.Sprint("a", i)), PromptTokenIDs: prompt(100*i, 3+i), Params: params(30 + i), EOSTokenID: -1}
		h.addReq(r)
		reqs = append(reqs, r)
	}
	h.run()
	hits := 0
	for i, r := range reqs {
		seq := append(slices.Clone(r.PromptTokenIDs), h.tokens[r.ID]...)
		b := sched.EngineRequest{ID: sched.RequestID(fmt.Sprint("b", i)), PromptTokenIDs: seq, Params: params(5), EOSTokenID: -1}
		h.addReq(b)
		h.run()
		hits += h.prefill[b.ID].NumCachedTokens
	}
	if hits == 0 {
		t.Fatal("the second requests hit no cached block")
	}
	if tot := specTotals(t, h, k); tot.NumAcceptedTokens == tot.NumDraftTokens {
		t.Fatalf("some drafts should be rejected: %+v", tot)
	}
	h.checkDrained()
}

// forgetRecorder drafts nothing useful and records the requests the
// scheduler tells it to forget.
type forgetRecorder struct{ forgot []sched.RequestID }

func (f *forgetRecorder) Propose(_ sched.RequestID, dst, _ []int32, k int) []int32 {
	return wrongDrafter{500}.Propose(dst, nil, k)
}
func (f *forgetRecorder) Forget(id sched.RequestID) { f.forgot = append(f.forgot, id) }

// TestSpeculativeForget: the drafter forgets a request when it finishes,
// is aborted or is preempted.
func TestSpeculativeForget(t *testing.T) {
	fr := &forgetRecorder{}
	o := tinyKV(sched.FCFS)
	o.sched.Speculative = &sched.Speculative{Drafter: fr, NumTokens: 2}
	h := newHarness(t, o)
	preemptionScenario(t, h)
	victim := firstVictim(t, h)
	if !slices.Contains(fr.forgot, victim) {
		t.Fatalf("preempted %s, forgot %v", victim, fr.forgot)
	}
	h.add("gone", prompt(300, 3), 10)
	h.step()
	h.s.Abort("gone")
	h.run()
	for _, id := range []sched.RequestID{"old", "new", "gone"} {
		if !slices.Contains(fr.forgot, id) {
			t.Fatalf("%s finished, forgot only %v", id, fr.forgot)
		}
	}
}
