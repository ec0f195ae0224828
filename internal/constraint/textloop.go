package constraint

// Most tokens of a large vocabulary are string text: whole UTF-8 characters
// that may stand raw inside a JSON string. In many states every string-text
// character leads to one same state (the text target): inside an
// unconstrained string it is the state itself (a text loop), inside a
// string counted by minLength/maxLength the state one character further.
// From such a state a text token of n characters leads to the state n text
// targets away, so the mask of the text tokens follows from the chain of
// targets and the matcher's text tokens by character count, and only the
// (small) trie of the other tokens is walked.

// nonUniform is the text target of a set whose string-text characters lead
// to different sets; textUnknown one not computed yet.
const (
	nonUniform  int32 = -3
	textUnknown int32 = -4
)

// utf8Lead describes the UTF-8 sequences starting with lead bytes lo..hi:
// the range of their second byte and their length.
type utf8Lead struct{ lo, hi, lo2, hi2, n byte }

var utf8Leads = []utf8Lead{
	{0xC2, 0xDF, 0x80, 0xBF, 2},
	{0xE0, 0xE0, 0xA0, 0xBF, 3}, {0xE1, 0xEC, 0x80, 0xBF, 3}, {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
	{0xF0, 0xF0, 0x90, 0xBF, 4}, {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
}

// isTextLoop reports whether every string-text character leads from set s
// back to s (so every string-text token is allowed and keeps s).
// A set whose space does not lead back to it is not one: that is checked
// first, without computing its text target.
func (a *automaton) isTextLoop(s int32) bool {
	if a.sets[s].text == textUnknown && a.step(s, ' ') != s {
		return false
	}
	return a.textTarget(s) == s
}

// textTarget returns the set every string-text character leads to from set
// s (deadSet when none may follow), or nonUniform. A target holding a hole
// frame (an abstract stack returned to its context, see context.go) is
// nonUniform too: the text tokens through it depend on the context.
func (a *automaton) textTarget(s int32) int32 {
	if t := a.rawTextTarget(s); t < 0 || !a.sets[t].hole {
		return t
	}
	return nonUniform
}

// rawTextTarget is textTarget keeping a target that holds a hole frame (a
// group of frames returning to its context after one character: see
// textparts.go). It is computed once per set: for a real set from the
// text targets of its frame groups when each group's is uniform, else by
// stepping every class of string-text characters.
func (a *automaton) rawTextTarget(s int32) int32 {
	if t := a.sets[s].text; t != textUnknown {
		return t
	}
	t, ok := a.textTargetByParts(s)
	if !ok {
		t = a.computeTextTarget(s)
	}
	a.sets[s].text = t
	return t
}

// computeTextTarget steps every class of string-text characters from s. A
// character whose first bytes lead to a set holding a hole frame (a
// stack returned to its context inside the character) makes s
// nonUniform; the target itself may hold one.
func (a *automaton) computeTextTarget(s int32) int32 {
	target := a.step(s, ' ')
	for _, r := range [][2]byte{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7F}} {
		if !a.rangeLeadsTo(s, r[0], r[1], 0, target, nil) {
			return nonUniform
		}
	}
	seen := map[[2]int32]bool{} // (set, continuation bytes left) known to reach target
	for _, l := range utf8Leads {
		ok := a.eachClass(s, l.lo, l.hi, func(t int32) bool {
			if t < 0 {
				return target == deadSet
			}
			return !a.sets[t].hole && a.rangeLeadsTo(t, l.lo2, l.hi2, l.n-2, target, seen)
		})
		if !ok {
			return nonUniform
		}
	}
	return target
}

// rangeLeadsTo reports whether every byte in [lo, hi] followed by any left
// continuation bytes (0x80–0xBF) leads from set s to target (a dead set
// stays dead). seen memoizes (set, left) pairs known to; nil when left is 0.
func (a *automaton) rangeLeadsTo(s int32, lo, hi byte, left byte, target int32, seen map[[2]int32]bool) bool {
	return a.eachClass(s, lo, hi, func(t int32) bool {
		if left == 0 || t < 0 {
			return t == target
		}
		if a.sets[t].hole {
			return false // returned to the context inside a character
		}
		key := [2]int32{t, int32(left)}
		if seen[key] {
			return true
		}
		if !a.rangeLeadsTo(t, 0x80, 0xBF, left-1, target, seen) {
			return false
		}
		seen[key] = true
		return true
	})
}

// eachClass calls f with the set reached from s by each byte in [lo, hi],
// once per class of bytes s cannot tell apart (no byte edge of its frames
// starts or ends inside a class), and reports whether f held for all.
func (a *automaton) eachClass(s int32, lo, hi byte, f func(t int32) bool) bool {
	var cut [257]bool // cut[b]: a class starts at byte b
	for _, id := range a.sets[s].frames {
		for _, e := range a.prog.states[a.frames[id].pos].bytes {
			cut[e.lo] = true
			cut[int(e.hi)+1] = true
		}
	}
	for c := int(lo); c <= int(hi); c++ {
		if c == int(lo) || cut[c] {
			if !f(a.step(s, byte(c))) {
				return false
			}
		}
	}
	return true
}

// textChainMax bounds the chain of text targets textReach follows: the
// few longer text tokens (about 700 of Llama-3's 121,824) are walked in
// their own trie instead.
const textChainMax = 16

// textReach follows the text targets from s, at most textChainMax of
// them. ok is false when one of them is not uniform or holds a hole frame
// (an abstract set's stack returned to its context, see context.go). Otherwise every text
// token of at most n characters is allowed from s and, when all is true,
// the longer ones are decided too: allowed if n is maxChars, else not;
// when all is false the tokens of more than n (textChainMax) characters
// are undecided.
func (a *automaton) textReach(s int32, maxChars int) (n int, all, ok bool) {
	cur := s
	for n = 0; n < textChainMax; n++ {
		t := a.textTarget(cur)
		switch {
		case t == nonUniform || t >= 0 && a.sets[t].hole:
			return 0, false, false
		case t == deadSet:
			return n, true, true
		case t == cur:
			return maxChars, true, true
		}
		cur = t
	}
	return n, false, true
}
