package constraint

import "regexp/syntax"

// unbounded marks a length range with no upper end.
const unbounded = -1

// matchLen is the range of lengths, in characters, of the strings re
// matches (hi unbounded when infinite).
func matchLen(re *syntax.Regexp) (lo, hi int) {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune), len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, 1
	case syntax.OpCapture:
		return matchLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return repeatLen(re)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			l, h := matchLen(s)
			lo += l
			if hi != unbounded {
				hi = addLen(hi, h)
			}
		}
		return lo, hi
	case syntax.OpAlternate:
		return unionLen(re.Sub, matchLen)
	}
	return 0, 0 // empty match, anchors
}

// unionLen is the length range of the union of subs, each measured by f.
func unionLen(subs []*syntax.Regexp, f func(*syntax.Regexp) (int, int)) (lo, hi int) {
	lo = -1
	for _, s := range subs {
		l, h := f(s)
		if lo < 0 || l < lo {
			lo = l
		}
		if hi != unbounded && (h == unbounded || h > hi) {
			hi = h
		}
	}
	return max(lo, 0), hi
}

func repeatLen(re *syntax.Regexp) (lo, hi int) {
	l, h := matchLen(re.Sub[0])
	min, max := re.Min, re.Max
	switch re.Op {
	case syntax.OpStar:
		min, max = 0, -1
	case syntax.OpPlus:
		min, max = 1, -1
	case syntax.OpQuest:
		min, max = 0, 1
	}
	lo = l * min
	switch {
	case max < 0 && h != 0 || h == unbounded:
		hi = unbounded
	case max < 0:
		hi = 0
	default:
		hi = h * max
	}
	return lo, hi
}

func addLen(a, b int) int {
	if b == unbounded {
		return unbounded
	}
	return a + b
}

// containingLen is the range of lengths of the strings containing a match of
// re (JSON Schema's pattern): unbounded above unless every branch is
// anchored at both ends.
func containingLen(re *syntax.Regexp) (lo, hi int) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpAlternate {
		return unionLen(re.Sub, containingLen)
	}
	var t regexTranslator
	body, start, end, _ := t.stripAnchors(re)
	lo, hi = matchLen(body)
	if !start || !end {
		hi = unbounded
	}
	return lo, hi
}

// lengthsImplied reports whether every string of length in [lo, hi] also
// has a length in [minL, maxL] (maxL < 0: no maximum).
func lengthsImplied(lo, hi, minL, maxL int) bool {
	return lo >= minL && (maxL < 0 || hi != unbounded && hi <= maxL)
}
