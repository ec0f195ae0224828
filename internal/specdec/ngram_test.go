package specdec

import (
	"slices"
	"testing"
)

// The cases are vLLM's tests/v1/spec_decode/test_ngram.py
// (test_find_longest_matched_ngram_and_propose_tokens and
// test_ngram_proposer), expected values as vLLM asserts them.
func TestNgramMatchesVLLM(t *testing.T) {
	cases := []struct {
		name     string
		tokens   []int32
		min, max int
		k        int
		want     []int32
	}{
		{"no 2-gram match", []int32{1, 2, 3, 4, 1, 2, 3, 5, 6}, 2, 2, 2, nil},
		{"2-gram k=3", []int32{1, 2, 3, 4, 1, 2, 3}, 2, 2, 3, []int32{4, 1, 2}},
		{"2-gram k=2", []int32{1, 2, 3, 4, 1, 2, 3}, 2, 2, 2, []int32{4, 1}},
		{"1-gram k=3", []int32{1, 2, 3, 4, 1, 2, 3}, 1, 1, 3, []int32{4, 1, 2}},
		{"1-gram k=2", []int32{1, 2, 3, 4, 1, 2, 3}, 1, 1, 2, []int32{4, 1}},
		{"2-gram later match", []int32{1, 3, 6, 2, 3, 4, 1, 2, 3}, 2, 2, 3, []int32{4, 1, 2}},
		{"1-gram first match", []int32{1, 3, 6, 2, 3, 4, 1, 2, 3}, 1, 1, 2, []int32{6, 2}},
		{"no match", []int32{1, 2, 3, 4, 5}, 2, 2, 2, nil},
		{"no 4-gram", []int32{1, 2, 3, 4, 1, 2, 3}, 4, 4, 2, nil},
		{"3-gram, not 4", []int32{1, 2, 3, 4, 1, 2, 3}, 3, 4, 2, []int32{4, 1}},
		{"4-gram wins", []int32{2, 3, 4, 5, 1, 2, 3, 4, 1, 2, 3, 4}, 3, 4, 2, []int32{1, 2}},
		{"3-gram wins over 2", []int32{3, 4, 5, 2, 3, 4, 1, 2, 3, 4}, 2, 4, 2, []int32{1, 2}},
		{"first of several", []int32{1, 2, 3, 100, 1, 2, 3, 200, 1, 2, 3, 300, 1, 2, 3}, 3, 3, 2, []int32{100, 1}},
		// The docstring's example: fewer than k tokens follow the match.
		{"short tail", []int32{1, 2, 3, 4, 2, 3}, 2, 3, 4, []int32{4, 2, 3}},
		{"shorter than min", []int32{7}, 2, 2, 3, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Ngram{Min: c.min, Max: c.max}.Propose(nil, c.tokens, c.k)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Fatalf("Propose(%v, min %d, max %d, k %d) = %v, want %v", c.tokens, c.min, c.max, c.k, got, c.want)
			}
		})
	}
}

// TestNgramBruteForce checks Propose against the definition on random
// sequences over a small alphabet: the longest n in [min, max] whose
// suffix occurs earlier, earliest occurrence, the tokens after it.
func TestNgramBruteForce(t *testing.T) {
	seed := uint64(1)
	next := func() uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return seed >> 33 }
	for iter := 0; iter < 3000; iter++ {
		n := 1 + int(next()%40)
		toks := make([]int32, n)
		for i := range toks {
			toks[i] = int32(next() % 4)
		}
		lo := 1 + int(next()%3)
		hi := lo + int(next()%3)
		k := 1 + int(next()%5)
		want := bruteForce(toks, lo, hi, k)
		got := Ngram{Min: lo, Max: hi}.Propose(nil, toks, k)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("Propose(%v, %d, %d, %d) = %v, want %v", toks, lo, hi, k, got, want)
		}
	}
}

func bruteForce(toks []int32, lo, hi, k int) []int32 {
	n := len(toks)
	for m := min(hi, n-1); m >= lo; m-- {
		suffix := toks[n-m:]
		for s := 0; s+m <= n-1; s++ { // an occurrence ending before the last token
			if slices.Equal(toks[s:s+m], suffix) {
				end := s + m
				return toks[end:min(n, end+k)]
			}
		}
	}
	return nil
}
