package constraint

import (
	"unicode/utf8"
)

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// utf8Ranges is the expr matching the UTF-8 encoding of one code point in
// any of rs (surrogates excluded, as they have no UTF-8 form).
func utf8Ranges(rs []runeRange) *expr {
	var alts []*expr
	for _, r := range rs {
		lo, hi := max(r.lo, 0), min(r.hi, utf8.MaxRune)
		for _, part := range [][2]rune{{lo, min(hi, 0xD7FF)}, {max(lo, 0xE000), hi}} {
			if part[0] <= part[1] {
				alts = append(alts, utf8Span(part[0], part[1]))
			}
		}
	}
	return alt(alts...)
}

// encLimits are the largest code point of each UTF-8 length.
var encLimits = [...]rune{0x7F, 0x7FF, 0xFFFF, utf8.MaxRune}

// utf8Span encodes [lo, hi] (no surrogates inside) as byte-range sequences,
// the usual split into ranges of equal length and shared leading bytes.
func utf8Span(lo, hi rune) *expr {
	for _, lim := range encLimits[:3] {
		if lo <= lim && hi > lim {
			return alt(utf8Span(lo, lim), utf8Span(lim+1, hi))
		}
	}
	if hi <= 0x7F {
		return byteIn(byteRange{byte(lo), byte(hi)})
	}
	n := utf8.RuneLen(lo)
	for i := 1; i < n; i++ {
		m := rune(1)<<(6*i) - 1 // the low bits of i continuation bytes
		if lo&^m != hi&^m {
			if lo&m != 0 {
				return alt(utf8Span(lo, lo|m), utf8Span((lo|m)+1, hi))
			}
			if hi&m != m {
				return alt(utf8Span(lo, (hi&^m)-1), utf8Span(hi&^m, hi))
			}
		}
	}
	var a, b [utf8.UTFMax]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	parts := make([]*expr, n)
	for i := range n {
		parts[i] = byteIn(byteRange{a[i], b[i]})
	}
	return seq(parts...)
}

// anyChar is any valid UTF-8 character.
func anyChar() *expr { return utf8Ranges([]runeRange{{0, utf8.MaxRune}}) }
