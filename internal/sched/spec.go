package sched

import (
	"fmt"

	"govllm/internal/stats"
)

// maxSpecSkip bounds the steps a request waits before drafting again after
// drafts in a row with nothing accepted.
const maxSpecSkip = 16

// draft proposes this step's drafts for running request r (into r.spec)
// when speculative decoding is on and r is decoding: at most its current
// k, what the step's budget leaves after its own token, and what its
// max_tokens and the model length leave after this step's sure token.
func (s *Scheduler) draft(r *Request) []int32 {
	r.spec = r.spec[:0]
	sp := s.cfg.Speculative
	if sp == nil || r.pool != nil || r.NumComputedTokens != len(r.allTokens)-1 {
		return nil
	}
	if r.specK == 0 {
		r.specK = sp.NumTokens
	}
	if r.specSkip > 0 {
		r.specSkip--
		return nil
	}
	k := min(r.specK, s.step.budget-1, r.Params.MaxTokens-r.NumOutputTokens()-1, s.cfg.MaxModelLen-len(r.allTokens)-1)
	if k <= 0 {
		return nil
	}
	r.spec = sp.Drafter.Propose(r.ID, r.spec, r.allTokens, k)
	if len(r.spec) > k {
		panic(fmt.Sprintf("sched: drafter proposed %d tokens, asked for at most %d", len(r.spec), k))
	}
	return r.spec
}

// adaptSpec updates r's draft length after a step that verified numDraft
// drafts and accepted the first numAccepted: every draft accepted doubles
// it (up to k), none accepted halves it, and at one token each miss in a
// row waits twice as many steps before drafting again (up to
// maxSpecSkip), so a sequence the drafter cannot predict costs almost
// nothing; partial acceptance keeps it.
func (s *Scheduler) adaptSpec(r *Request, numDraft, numAccepted int) {
	switch {
	case numAccepted == numDraft:
		r.specK = min(s.cfg.Speculative.NumTokens, 2*r.specK)
		r.specMisses = 0
	case numAccepted == 0:
		if r.specK == 1 {
			r.specSkip = min(1<<r.specMisses, maxSpecSkip)
			r.specMisses++
		}
		r.specK = max(1, r.specK/2)
	default:
		r.specMisses = 0
	}
}

// forgetDrafts tells the drafter r's sequence is gone (finished, aborted
// or preempted: a resumed request is proposed for from scratch).
func (s *Scheduler) forgetDrafts(r *Request) {
	if s.cfg.Speculative != nil {
		s.cfg.Speculative.Drafter.Forget(r.ID)
	}
}

// specStats returns the step's speculative-decoding stats, made on first use.
func (s *Scheduler) specStats(st **stats.SpecDecodingStats) *stats.SpecDecodingStats {
	if *st == nil {
		*st = &stats.SpecDecodingStats{NumAcceptedPerPos: make([]int, s.cfg.Speculative.NumTokens)}
	}
	return *st
}
