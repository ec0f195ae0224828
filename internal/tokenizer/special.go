package tokenizer

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// specialTok is a token recognised when written in input text.
type specialTok struct {
	s      string
	id     int32
	lstrip bool // also consumes the whitespace on its left
	rstrip bool // also consumes the whitespace on its right
}

// specialMatcher finds special tokens in text, leftmost-longest (as the Hugging
// Face added-vocabulary matcher).
type specialMatcher struct {
	byFirst [256][]specialTok // longest first
}

func (m *specialMatcher) add(s specialTok) {
	if s.s == "" {
		return
	}
	l := append(m.byFirst[s.s[0]], s)
	sort.SliceStable(l, func(i, j int) bool { return len(l[i].s) > len(l[j].s) })
	m.byFirst[s.s[0]] = l
}

// find returns the byte span [start, end) of the first special token in
// text and its id; start is -1 when there is none.
func (m *specialMatcher) find(text string) (start, end int, id int32) {
	for i := 0; i < len(text); i++ {
		l := m.byFirst[text[i]]
		if l == nil {
			continue
		}
		for _, s := range l {
			if len(text)-i >= len(s.s) && text[i:i+len(s.s)] == s.s {
				start, end = i, i+len(s.s)
				if s.lstrip {
					for start > 0 {
						r, n := utf8.DecodeLastRuneInString(text[:start])
						if !unicode.IsSpace(r) {
							break
						}
						start -= n
					}
				}
				if s.rstrip {
					for end < len(text) {
						r, n := utf8.DecodeRuneInString(text[end:])
						if !unicode.IsSpace(r) {
							break
						}
						end += n
					}
				}
				return start, end, s.id
			}
		}
	}
	return -1, -1, -1
}
