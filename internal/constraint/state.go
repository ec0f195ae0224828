package constraint

import (
	"errors"
	"fmt"
	"sync"
)

// Constraint is a compiled constraint: safe for concurrent use, and
// cacheable by its source. NewState starts a request on it.
//
// The states of one constraint and vocabulary share one lazily built
// automaton, so a request reuses the transitions and masks the requests
// before it computed (a server compiles a schema once and serves it many
// times); past maxSharedSets deterministic states a new one is started
// for the next requests (the automaton never shrinks).
type Constraint struct {
	prog *program

	mu      sync.Mutex
	shared  *automaton // nil until the first state
	sharedM *Matcher   // the vocabulary shared's masks are for
	start   int32      // shared's start set
}

// maxSharedSets bounds the automaton new states share: each set holds a
// 1 KiB transition row, so a cached constraint keeps at most about 8 MiB
// of transitions (and its 64 cached masks) alive between requests.
const maxSharedSets = 1 << 13

// ErrFinished is returned by Advance after the constraint took EOS.
var ErrFinished = errors.New("constraint: already finished")

// State is one request's position in a constraint. A State, its clones and
// the other states of its constraint share a lazily built automaton
// (guarded by a mutex), so they may be used from different goroutines; one
// State must not be used concurrently.
type State struct {
	m    *Matcher
	a    *automaton
	cur  int32
	done bool
}

// NewState starts matching c over the vocabulary m.
func (c *Constraint) NewState(m *Matcher) *State {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared == nil || c.sharedM != m || c.shared.numSets() > maxSharedSets {
		c.shared, c.start = newAutomaton(c.prog)
		c.sharedM = m
	}
	return &State{m: m, a: c.shared, cur: c.start}
}

// newPrivateState starts a state on an automaton of its own (the cold
// path every first request of a constraint takes; the mask benchmark
// measures it).
func (c *Constraint) newPrivateState(m *Matcher) *State {
	a, s := newAutomaton(c.prog)
	return &State{m: m, a: a, cur: s}
}

// Mask writes into dst (at least m.MaskWords() words) the bitset of tokens
// allowed next: bit id%64 of word id/64. EOS ids are allowed exactly when
// the output so far is complete; after EOS nothing is allowed.
func (s *State) Mask(dst []uint64) {
	dst = dst[:s.m.MaskWords()]
	if s.done || s.cur < 0 {
		clear(dst)
		return
	}
	s.a.mu.Lock()
	s.a.fillMask(s.m, s.cur, dst)
	s.a.mu.Unlock()
}

// Allowed reports whether token id may come next (one token's share of
// Mask, without computing the whole mask).
func (s *State) Allowed(id int32) bool {
	if s.done || id < 0 || int(id) >= s.m.size {
		return false
	}
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if s.isEOS(id) {
		return s.a.sets[s.cur].accept
	}
	b := s.m.tokens[id]
	return b != nil && s.a.stepBytes(s.cur, b) >= 0
}

func (s *State) isEOS(id int32) bool {
	for _, e := range s.m.eos {
		if e == id {
			return true
		}
	}
	return false
}

// Advance consumes token id. A token the mask forbids is an error and leaves
// the state unchanged.
func (s *State) Advance(id int32) error {
	if s.done {
		return ErrFinished
	}
	if id < 0 || int(id) >= s.m.size {
		return fmt.Errorf("constraint: token %d out of range", id)
	}
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if s.isEOS(id) {
		if !s.a.sets[s.cur].accept {
			return fmt.Errorf("constraint: EOS token %d before the output is complete", id)
		}
		s.done = true
		return nil
	}
	b := s.m.tokens[id]
	if b == nil {
		return fmt.Errorf("constraint: special token %d is not allowed", id)
	}
	n := s.a.stepBytes(s.cur, b)
	if n < 0 {
		return fmt.Errorf("constraint: token %d (%q) is not allowed here", id, b)
	}
	s.cur = n
	return nil
}

// Clone returns an independent copy of s (for n > 1 forks or replay).
func (s *State) Clone() *State {
	c := *s
	return &c
}

// IsAccepting reports whether the output so far is complete (EOS allowed).
func (s *State) IsAccepting() bool {
	if s.done {
		return true
	}
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	return s.a.sets[s.cur].accept
}

// IsFinished reports whether EOS was consumed.
func (s *State) IsFinished() bool { return s.done }

// ForcedBytes returns the bytes that must come next whatever is generated:
// the longest string with exactly one continuation at each byte, stopping
// where the output could also end. The engine may append tokens spelling a
// prefix of it without sampling (fast-forward).
func (s *State) ForcedBytes() []byte {
	if s.done {
		return nil
	}
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	var out []byte
	for cur := s.cur; !s.a.sets[cur].accept && len(out) < 4096; {
		next, only := int32(deadSet), byte(0)
		for c := range 256 {
			if t := s.a.step(cur, byte(c)); t >= 0 {
				if next >= 0 {
					return out
				}
				next, only = t, byte(c)
			}
		}
		if next < 0 {
			return out
		}
		out = append(out, only)
		cur = next
	}
	return out
}
