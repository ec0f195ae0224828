package output

import "strings"

// checkStop looks for a stop string in text whose last newChars bytes are
// new (vLLM detokenizer check_stop_strings). Only the region a match could
// newly cover is searched: for a stop string of length L, from
// len(text) − newChars − L + 1. The first stop string in list order that
// matches wins. truncate is the length text must be cut to: the start of
// the match, or its end when includeInOutput (−1 when nothing needs
// cutting).
func checkStop(text []byte, newChars int, stop []string, includeInOutput bool) (matched string, truncate int, ok bool) {
	if newChars <= 0 {
		return "", -1, false
	}
	for _, s := range stop {
		from := max(len(text)-newChars-len(s)+1, 0)
		i := strings.Index(string(text[from:]), s)
		if i < 0 {
			continue
		}
		i += from
		if includeInOutput {
			i += len(s)
			if i >= len(text) {
				return s, -1, true
			}
		}
		return s, i, true
	}
	return "", -1, false
}

// holdBack is how many trailing bytes of text must not be streamed yet
// because they could be the start of a stop string: the longest suffix of
// text that is a proper prefix of some stop string. Text before that
// suffix can never become part of a match, so it is safe to hand out.
func holdBack(text []byte, stop []string) int {
	hold := 0
	for _, s := range stop {
		for k := min(len(s)-1, len(text)); k > hold; k-- {
			if string(text[len(text)-k:]) == s[:k] {
				hold = k
				break
			}
		}
	}
	return hold
}
