package constraint

// Most tokens of a large vocabulary are string text: whole UTF-8 characters
// that may stand raw inside a JSON string. Inside an unconstrained string
// every one of them is allowed and leads back to the same state, so the
// mask is the precomputed text bitset plus a walk of the (small) trie of the
// other tokens.

// loopState caches isTextLoop per set.
const (
	loopUnknown uint8 = iota
	loopNo
	loopYes
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
func (a *automaton) isTextLoop(s int32) bool {
	d := &a.sets[s]
	if d.loop != loopUnknown {
		return d.loop == loopYes
	}
	ok := a.textLoop(s)
	a.sets[s].loop = map[bool]uint8{false: loopNo, true: loopYes}[ok]
	return ok
}

func (a *automaton) textLoop(s int32) bool {
	for c := 0x20; c < 0x80; c++ {
		if c != '"' && c != '\\' && a.step(s, byte(c)) != s {
			return false
		}
	}
	seen := map[[2]int32]bool{} // (set, continuation bytes left) known to return to s
	var back func(t int32, left byte) bool
	back = func(t int32, left byte) bool {
		if left == 0 {
			return t == s
		}
		if t < 0 {
			return false
		}
		if seen[[2]int32{t, int32(left)}] {
			return true
		}
		for c := 0x80; c <= 0xBF; c++ {
			if !back(a.step(t, byte(c)), left-1) {
				return false
			}
		}
		seen[[2]int32{t, int32(left)}] = true
		return true
	}
	for _, l := range utf8Leads {
		for lead := int(l.lo); lead <= int(l.hi); lead++ {
			t := a.step(s, byte(lead))
			if t < 0 {
				return false
			}
			for c := int(l.lo2); c <= int(l.hi2); c++ {
				if !back(a.step(t, byte(c)), l.n-2) {
					return false
				}
			}
		}
	}
	return true
}
