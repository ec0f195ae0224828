package sched

import (
	"fmt"
	"slices"
)

// CheckInvariants verifies the queues against the request map and the
// KV-cache manager (whose own invariants it checks too). Tests call it;
// built with the `invariants` tag every mutating method calls it.
func (s *Scheduler) CheckInvariants() error {
	seen := make(map[*Request]bool, len(s.requests))
	for _, r := range s.running {
		if seen[r] {
			return fmt.Errorf("sched: %q twice in running", r.ID)
		}
		seen[r] = true
		if r.Status != StatusRunning {
			return fmt.Errorf("sched: %q in running with status %v", r.ID, r.Status)
		}
		if have := len(s.kv.BlockTable(string(r.ID))) * s.kv.BlockSize(); have < r.NumComputedTokens {
			return fmt.Errorf("sched: %q computed %d tokens with blocks for %d", r.ID, r.NumComputedTokens, have)
		}
		if !slices.Equal(r.blockTable, s.kv.BlockTable(string(r.ID))) {
			return fmt.Errorf("sched: %q cached block table %v, manager's %v", r.ID, r.blockTable, s.kv.BlockTable(string(r.ID)))
		}
		if r.NumComputedTokens > r.NumTokens() {
			return fmt.Errorf("sched: %q computed %d of %d tokens", r.ID, r.NumComputedTokens, r.NumTokens())
		}
	}
	if len(s.running) > s.cfg.MaxNumSeqs {
		return fmt.Errorf("sched: %d running > max num seqs %d", len(s.running), s.cfg.MaxNumSeqs)
	}
	var err error
	s.waiting.Each(func(r *Request) {
		switch {
		case err != nil:
		case seen[r]:
			err = fmt.Errorf("sched: %q both running and waiting (or twice waiting)", r.ID)
		case r.Status != StatusWaiting && r.Status != StatusPreempted:
			err = fmt.Errorf("sched: %q waiting with status %v", r.ID, r.Status)
		case r.NumComputedTokens != 0 || len(s.kv.BlockTable(string(r.ID))) != 0:
			err = fmt.Errorf("sched: waiting %q holds %d computed tokens, %d blocks", r.ID, r.NumComputedTokens, len(s.kv.BlockTable(string(r.ID))))
		}
		seen[r] = true
	})
	if err != nil {
		return err
	}
	if len(seen) != len(s.requests) {
		return fmt.Errorf("sched: %d requests queued, %d known", len(seen), len(s.requests))
	}
	for r := range seen {
		if s.requests[r.ID] != r {
			return fmt.Errorf("sched: queued %q not in the request map", r.ID)
		}
	}
	return s.kv.CheckInvariants()
}

func (s *Scheduler) assertInvariants() {
	if invariantsEnabled {
		if err := s.CheckInvariants(); err != nil {
			panic(err)
		}
	}
}
