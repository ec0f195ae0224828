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
	r.spec, r.specForced = r.spec[:0], false
	sp := s.cfg.Speculative
	if (sp == nil && !s.cfg.FastForward) || r.pool != nil || r.NumComputedTokens != len(r.allTokens)-1 {
		return nil
	}
	limit := min(s.step.budget-1, r.Params.MaxTokens-r.NumOutputTokens()-1, s.cfg.MaxModelLen-len(r.allTokens)-1)
	if fd, ok := r.constraint.(ForcedDrafter); ok && s.cfg.FastForward {
		if r.forcedSkip > 0 {
			r.forcedSkip--
		} else if k := min(s.specWidth(), limit); k > 0 {
			if r.spec = fd.ForcedTokens(r.spec, k); len(r.spec) > 0 {
				r.specForced = true
				return r.checkDraft(k)
			}
		}
	}
	if sp == nil {
		return nil
	}
	if r.specK == 0 {
		r.specK = sp.NumTokens
	}
	if r.specSkip > 0 {
		r.specSkip--
		return nil
	}
	k := min(r.specK, limit)
	if k <= 0 {
		return nil
	}
	r.spec = sp.Drafter.Propose(r.ID, r.spec, r.allTokens, k)
	return r.checkDraft(k)
}

// checkDraft returns r's drafts after checking a proposer kept to k.
func (r *Request) checkDraft(k int) []int32 {
	if len(r.spec) > k {
		panic(fmt.Sprintf("sched: %d tokens drafted, at most %d asked for", len(r.spec), k))
	}
	return r.spec
}

// specWidth is the most tokens one step drafts: num_speculative_tokens,
// or FastForwardTokens without speculative decoding.
func (s *Scheduler) specWidth() int {
	if s.cfg.Speculative != nil {
		return s.cfg.Speculative.NumTokens
	}
	return FastForwardTokens
}

// adaptSpec updates r's draft length after a step that verified numDraft
// drafts and accepted the first numAccepted (fast-forward drafts only
// back off, see below): every draft accepted doubles
// it (up to k), none accepted halves it, and at one token each miss in a
// row waits twice as many steps before drafting again (up to
// maxSpecSkip), so a sequence the drafter cannot predict costs almost
// nothing; partial acceptance keeps it.
func (s *Scheduler) adaptSpec(r *Request, numDraft, numAccepted int) {
	if r.specForced {
		// Fast-forward: a spelling the model rejects outright waits
		// twice as many steps each time before it is drafted again.
		if numAccepted > 0 {
			r.forcedMisses = 0
		} else {
			r.forcedSkip = min(1<<r.forcedMisses, maxSpecSkip)
			r.forcedMisses++
		}
		return
	}
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
		*st = &stats.SpecDecodingStats{NumAcceptedPerPos: make([]int, s.specWidth())}
	}
	return *st
}
