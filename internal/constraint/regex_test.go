package constraint

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

// step is one decoding step: the token to take, and whether it must be
// allowed.
type step struct {
	tok string
	ok  bool
}

func runSteps(t *testing.T, c *Constraint, steps []step, accepting bool) {
	t.Helper()
	m := testMatcher(t)
	s := c.NewState(m)
	mask := make([]uint64, m.MaskWords())
	for i, st := range steps {
		id := tokenID(t, st.tok)
		s.Mask(mask)
		inMask := mask[id>>6]&(1<<(id&63)) != 0
		err := s.Advance(id)
		if inMask != st.ok || (err == nil) != st.ok {
			t.Fatalf("step %d %q: mask %v, advance err %v; want allowed=%v", i, st.tok, inMask, err, st.ok)
		}
	}
	if s.IsAccepting() != accepting {
		t.Fatalf("accepting = %v, want %v", s.IsAccepting(), accepting)
	}
}

func TestRegexAndChoice(t *testing.T) {
	tests := []struct {
		name      string
		build     func() (*Constraint, error)
		steps     []step
		accepting bool
	}{
		{"digits then word", func() (*Constraint, error) { return Regex(`[0-9]{2}-(ab|c)`) },
			[]step{{"1", true}, {"a", false}, {"12", false}, {"0", true}, {"-", true}, {"abc", false}, {"ab", true}, {"EOS", true}}, true},
		{"token spanning terminals", func() (*Constraint, error) { return Regex(`(ab)c`) },
			[]step{{"abc", true}, {"EOS", true}}, true},
		{"not complete", func() (*Constraint, error) { return Regex(`abc`) },
			[]step{{"ab", true}, {"EOS", false}}, false},
		{"split utf-8", func() (*Constraint, error) { return Regex(`é+`) },
			[]step{{"\xc3", true}, {"\xc3", false}, {"\xa9", true}, {"é", true}, {"EOS", true}}, true},
		{"anchors", func() (*Constraint, error) { return Regex(`^x$`) },
			[]step{{"y", false}, {"x", true}, {"x", false}}, true},
		{"choice", func() (*Constraint, error) { return Choice([]string{"abc", "ab", "x"}) },
			[]step{{"a", true}, {"b", true}, {"EOS", true}}, true},
		{"choice prefix", func() (*Constraint, error) { return Choice([]string{"abc", "x"}) },
			[]step{{"ab", true}, {"EOS", false}, {"c", true}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.build()
			if err != nil {
				t.Fatal(err)
			}
			runSteps(t, c, tt.steps, tt.accepting)
		})
	}
}

func TestMaskListsExactlyTheContinuations(t *testing.T) {
	c, err := Regex(`a(b|bc)?`)
	if err != nil {
		t.Fatal(err)
	}
	m := testMatcher(t)
	s := c.NewState(m)
	got := allowedStrings(m, s, smallVocab)
	want := []string{"a", "ab", "abc"}
	if !slices.Equal(got, want) {
		t.Fatalf("start: %q, want %q", got, want)
	}
	if err := s.Advance(tokenID(t, "a")); err != nil {
		t.Fatal(err)
	}
	got = allowedStrings(m, s, smallVocab)
	want = []string{"b", "EOS"}
	if !slices.Equal(got, want) {
		t.Fatalf("after a: %q, want %q", got, want)
	}
}

func TestRegexErrors(t *testing.T) {
	for _, p := range []string{`a\bb`, `(`, `a^b`, `[z-a]`} {
		if _, err := Regex(p); err == nil {
			t.Errorf("Regex(%q) compiled; want an error", p)
		}
	}
}

func TestForcedBytesAndClone(t *testing.T) {
	c, err := Choice([]string{`{"name":"x"}`, `{"name":"y"}`})
	if err != nil {
		t.Fatal(err)
	}
	m := testMatcher(t)
	s := c.NewState(m)
	if got := string(s.ForcedBytes()); got != `{"name":"` {
		t.Fatalf("ForcedBytes = %q", got)
	}
	for _, tok := range []string{"{\"", "n"} {
		if err := s.Advance(tokenID(t, tok)); err == nil {
			continue
		}
		t.Fatalf("advance %q", tok)
	}
	fork := s.Clone()
	if err := fork.Advance(tokenID(t, "x")); err == nil {
		t.Fatal("fork took x after {\"n; want an error (ame\":\" must come first)")
	}
	if got := string(fork.ForcedBytes()); got != `ame":"` {
		t.Fatalf("fork ForcedBytes = %q", got)
	}
}

// Clones, and the states of one constraint and vocabulary, share one
// lazily built automaton: they may run in different goroutines (the race
// detector checks the locking) and stay independent. Another vocabulary
// gets an automaton of its own (its masks have another size).
func TestClonesRunConcurrently(t *testing.T) {
	c, err := Regex(`(ab|c)*x`)
	if err != nil {
		t.Fatal(err)
	}
	m := testMatcher(t)
	base := c.NewState(m)
	paths := [][]string{{"ab", "c", "x"}, {"c", "c", "ab", "x"}, {"abc", "x"}}
	errs := make(chan error, len(paths))
	if c.NewState(m).a != base.a {
		t.Error("two states of one constraint and vocabulary do not share the automaton")
	}
	if c.NewState(testMatcher(t)).a == base.a {
		t.Error("a state over another vocabulary shares the automaton")
	}
	for i, p := range paths {
		s := base.Clone()
		if i%2 == 1 {
			s = c.NewState(m)
		}
		ids := make([]int32, len(p))
		for i, tok := range p {
			ids[i] = tokenID(t, tok)
		}
		go func() {
			mask := make([]uint64, m.MaskWords())
			for _, id := range ids {
				s.Mask(mask)
				if err := s.Advance(id); err != nil {
					errs <- err
					return
				}
			}
			if !s.IsAccepting() {
				errs <- errors.New("clone did not end accepting")
				return
			}
			errs <- nil
		}()
	}
	for range paths {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if base.IsAccepting() {
		t.Error("the original state moved with its clones")
	}
}

// Random outputs of a regex constraint match the regex (Go's regexp,
// anchored), and so do those of an equivalent GBNF grammar.
func TestRandomRegexOutputsMatch(t *testing.T) {
	m, err := NewMatcher(byteVocab{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{`[a-c]{2,4}(x|yz)?`, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, `(?i)ab+[^a-z]`, `\w+@\w+\.(com|org)`, `é{1,3}.`, `(a|ab)(c|bcd)d*`} {
		c, err := Regex(p)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`^(?:` + p + `)$`)
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		for range 200 {
			out, ok := randomOutput(c, m, rng, 64)
			if ok && !re.Match(out) {
				t.Errorf("%s: output %q does not match", p, out)
			}
		}
	}
}
