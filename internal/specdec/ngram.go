package specdec

// Ngram is vLLM's prompt-lookup proposer.
type Ngram struct {
	Min, Max int // n-gram lengths matched, Min ≤ n ≤ Max
}

// Propose returns up to k tokens for the sequence tokens: those that
// followed the earliest earlier occurrence of its longest suffix of
// length Min…Max (fewer when the sequence ends sooner), or nil. dst is
// reused when large enough.
//
// The search is vLLM's: on the reversed sequence, a prefix-function pass
// finds, for each position, the longest prefix (a suffix of the original)
// ending there, capped at Max; the longest one wins, and among equals the
// earliest in the original sequence.
func (g Ngram) Propose(dst, tokens []int32, k int) []int32 {
	n := len(tokens)
	if n < g.Min || k <= 0 || g.Max < 1 {
		return dst[:0]
	}
	rev := func(i int) int32 { return tokens[n-1-i] }
	lps := make([]int, g.Max)
	longest, position, prev := 0, 0, 0
	for i := 1; i < n; {
		switch {
		case rev(prev) == rev(i):
			prev++
			if prev >= longest {
				longest, position = prev, i
			}
			if i < g.Max {
				lps[i] = prev
			}
			if prev == g.Max {
				prev = lps[g.Max-1]
			}
			i++
		case prev != 0:
			prev = lps[prev-1]
		default:
			i++
		}
	}
	if longest < g.Min {
		return dst[:0]
	}
	start := n - 1 - position + longest
	k = min(k, n-start)
	return append(dst[:0], tokens[start:start+k]...)
}
