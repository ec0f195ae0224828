package constraint

import (
	"math/rand/v2"
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

// closureRef is closure computed frame by frame, one frame per program
// state visited (no epsilon lists, no shared marks): the reference for
// TestClosureMatchesReference.
func closureRef(a *automaton, id int32) (stops []int32, accept bool) {
	seen := map[int32]bool{}
	stack := []int32{id}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		f := a.frames[id]
		st := &a.prog.states[f.pos]
		if len(st.bytes) > 0 || f.pos == a.prog.hole {
			stops = append(stops, id)
		}
		for _, e := range st.eps {
			stack = append(stack, a.frameOf(e, f.parent))
		}
		if a.depth[id] < maxCalls {
			for _, c := range st.calls {
				ret := f.parent
				if !c.tail {
					ret = a.frameOf(c.ret, f.parent)
				}
				stack = append(stack, a.frameOf(a.prog.ruleStart[c.rule], ret))
			}
		}
		if st.final {
			if f.parent == noFrame {
				accept = true
			} else {
				stack = append(stack, f.parent)
			}
		}
	}
	slices.Sort(stops)
	return slices.Compact(stops), accept
}

// TestClosureMatchesReference checks closure (epsilon lists, visit marks
// shared by the frames of one closure) against closureRef for every frame
// built while masking outputs of several constraints, abstract frames
// (above a hole) included.
func TestClosureMatchesReference(t *testing.T) {
	m, err := NewMatcher(byteVocab{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := []string{
		`{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":4},"tags":{"type":"array","items":{"type":"string"}},"a":{"type":"boolean"},"b":{"type":"null"}},"required":["id","name","tags","a","b"]}`,
		`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"k":{"type":"array","items":{"$ref":"#/$defs/n"}},"v":{"anyOf":[{"type":"number"},{"type":"string","format":"date"}]}}}}}`,
		`{"type":"array","items":{"enum":["a","ab",1,null]},"minItems":1}`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	mask := make([]uint64, m.MaskWords())
	for _, sch := range schemas {
		c, err := JSONSchema([]byte(sch), Options{})
		if err != nil {
			t.Fatalf("%s: %v", sch, err)
		}
		for range 20 {
			randomOutput(c, m, rng, 200)
		}
		s := c.NewState(m)
		s.Mask(mask)
		a := s.a
		for id := int32(0); id < int32(len(a.frames)); id++ {
			a.gen++
			base := len(a.scratch)
			accept := a.closure(id)
			got := slices.Clone(a.scratch[base:])
			a.scratch = a.scratch[:base]
			slices.Sort(got)
			got = slices.Compact(got)
			want, wantAccept := closureRef(a, id)
			if !slices.Equal(got, want) || accept != wantAccept {
				t.Fatalf("%s: frame %d: closure %v (accept %v), reference %v (accept %v)", sch, id, got, accept, want, wantAccept)
			}
		}
	}
}
