package constraint

import (
	"strconv"
	"strings"
)

// maxBound is the largest magnitude a numeric bound keeps; a bound beyond
// it is clamped inwards (the constraint is then stricter than the schema).
const maxBound = 999_999_999_999_999_999

// natRange is the decimal naturals in [lo, hi] without leading zeros
// (hi < 0: unbounded).
func natRange(lo, hi int64) *expr {
	if hi >= 0 && lo > hi {
		return noneExpr
	}
	var alts []*expr
	for l := len(strconv.FormatInt(lo, 10)); l <= 19; l++ {
		top := pow10(l) - 1
		if l == 19 {
			top = maxBound
		}
		a := max(lo, pow10(l-1))
		if l == 1 {
			a = lo
		}
		b := top
		if hi >= 0 {
			b = min(hi, top)
		}
		if hi < 0 && a == pow10(l-1) && l > 1 {
			// every longer natural: [1-9][0-9]{l-1,}
			alts = append(alts, seq(digit19, rep(digit, l-1, 17)))
			break
		}
		if a <= b {
			alts = append(alts, fixedRange(strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)))
		}
		if hi >= 0 && b == hi {
			break
		}
	}
	return alt(alts...)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// fixedRange is the digit strings of len(a) between a and b (same length).
func fixedRange(a, b string) *expr {
	if a == "" {
		return emptyExpr
	}
	if a[0] == b[0] {
		return seq(lit(a[:1]), fixedRange(a[1:], b[1:]))
	}
	n := len(a) - 1
	if strings.Trim(a[1:], "0") == "" && strings.Trim(b[1:], "9") == "" {
		return seq(byteIn(byteRange{a[0], b[0]}), rep(digit, n, n))
	}
	alts := []*expr{seq(lit(a[:1]), fixedRange(a[1:], strings.Repeat("9", n)))}
	if a[0]+1 <= b[0]-1 {
		alts = append(alts, seq(byteIn(byteRange{a[0] + 1, b[0] - 1}), rep(digit, n, n)))
	}
	alts = append(alts, seq(lit(b[:1]), fixedRange(strings.Repeat("0", n), b[1:])))
	return alt(alts...)
}
