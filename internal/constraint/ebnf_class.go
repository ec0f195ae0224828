package constraint

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// parseClass reads a GBNF character class body ("^a-z\n"), negation
// included, as code point ranges.
func parseClass(s string) ([]runeRange, error) {
	neg := strings.HasPrefix(s, "^")
	if neg {
		s = s[1:]
	}
	var rs []runeRange
	for len(s) > 0 {
		lo, n, err := classChar(s)
		if err != nil {
			return nil, err
		}
		s = s[n:]
		hi := lo
		if len(s) > 1 && s[0] == '-' {
			if hi, n, err = classChar(s[1:]); err != nil {
				return nil, err
			}
			s = s[1+n:]
		}
		if hi < lo {
			return nil, fmt.Errorf("bad class range %q-%q", lo, hi)
		}
		rs = append(rs, runeRange{lo, hi})
	}
	if !neg {
		return rs, nil
	}
	return complementRanges(rs), nil
}

func classChar(s string) (rune, int, error) {
	if s[0] == '\\' {
		u, n, err := unescape(s)
		if err != nil {
			return 0, 0, err
		}
		r, _ := utf8.DecodeRuneInString(u)
		if len(u) == 1 {
			r = rune(u[0])
		}
		return r, n, nil
	}
	r, n := utf8.DecodeRuneInString(s)
	return r, n, nil
}

// complementRanges is every code point outside rs.
func complementRanges(rs []runeRange) []runeRange {
	var out []runeRange
	next := rune(0)
	for _, r := range sortRanges(rs) {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = max(next, r.hi+1)
	}
	if next <= utf8.MaxRune {
		out = append(out, runeRange{next, utf8.MaxRune})
	}
	return out
}

func sortRanges(rs []runeRange) []runeRange {
	out := append([]runeRange(nil), rs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].lo < out[j-1].lo; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// larkRegex compiles a /regex/flags terminal (RE2 syntax, full match).
func larkRegex(tok string, line int) (*expr, error) {
	end := strings.LastIndexByte(tok, '/')
	body, flags := tok[1:end], tok[end+1:]
	if flags != "" {
		body = "(?" + flags + ")" + body
	}
	re, err := syntax.Parse(body, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("line %d: regex %s: %w", line, tok, err)
	}
	t := regexTranslator{enc: rawChars}
	e, err := t.fullMatch(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("line %d: regex %s: %w", line, tok, err)
	}
	return e, nil
}
