package constraint

import (
	"slices"
	"testing"
)

// exactStep is the set of frames set s reaches on byte c, computed from s's
// frames alone (no transition table, no byte classes), and whether the
// sentence can end there.
func exactStep(a *automaton, s int32, c byte) (frames []int32, accept bool) {
	for _, id := range a.sets[s].frames {
		f := a.frames[id]
		for _, e := range a.prog.states[f.pos].bytes {
			if e.lo <= c && c <= e.hi {
				cl := a.closureOf(a.frameOf(e.to, f.parent))
				frames = append(frames, cl.stops...)
				accept = accept || cl.accept
			}
		}
	}
	slices.Sort(frames)
	return slices.Compact(frames), accept
}

// TestClassTransitionsExact checks every transition computeStep recorded
// for a whole byte class against the byte's own transition: after masks
// and byte-wise walks over several constraints, each known entry of every
// set's row must be the set exactStep computes for that byte.
func TestClassTransitionsExact(t *testing.T) {
	m, err := NewMatcher(byteVocab{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := []string{
		`{"type":"object","properties":{"name":{"type":"string","maxLength":3},"age":{"type":"integer","minimum":-5,"maximum":120},"tags":{"type":"array","items":{"enum":["a","bé","c\"d"]}}},"required":["name"]}`,
		`{"type":"string","pattern":"^[a-fA-F0-9]{2,4}(-[^x-z\\d]+)?$"}`,
		`{"type":"number","exclusiveMinimum":0.5}`,
		`{"anyOf":[{"type":"string","format":"date-time"},{"type":"boolean"},{"type":"null"}]}`,
	}
	mask := make([]uint64, m.MaskWords())
	for _, sch := range schemas {
		c, err := JSONSchema([]byte(sch), Options{})
		if err != nil {
			t.Fatalf("%s: %v", sch, err)
		}
		s := c.newPrivateState(m)
		s.Mask(mask)
		a := s.a
		// Step every set reached so far on every byte once, through the
		// table (classes), growing the automaton breadth-first up to a bound.
		for i := int32(0); i < int32(len(a.sets)) && i < 3000; i++ {
			for b := range 256 {
				a.step(i, byte(b))
			}
		}
		for i := int32(0); i < int32(len(a.sets)); i++ {
			for b := range 256 {
				got := *a.transAt(i, byte(b)) - transBias
				if got == unknown {
					continue
				}
				frames, accept := exactStep(a, i, byte(b))
				if len(frames) == 0 && !accept {
					if got != deadSet {
						t.Fatalf("%s: set %d byte %#x: got set %d, want dead", sch, i, b, got)
					}
					continue
				}
				if got < 0 || !slices.Equal(a.sets[got].frames, frames) || a.sets[got].accept != accept {
					t.Fatalf("%s: set %d byte %#x: class transition differs from the byte's own", sch, i, b)
				}
			}
		}
	}
}
