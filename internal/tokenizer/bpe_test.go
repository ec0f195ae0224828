package tokenizer

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBPEHeapMatchesSmall checks that the two merge loops agree, on words
// of every length up to the small-word limit (beyond it only the heap runs).
func TestBPEHeapMatchesSmall(t *testing.T) {
	toks := map[string]*Tokenizer{"stories260K": stories260K(t)["tok512.bin"]}
	if hasNodeModules() {
		toks["llama3"] = refTokenizer(t, "llama3")
		toks["llama2"] = refTokenizer(t, "llama2")
	}
	for name, tok := range toks {
		t.Run(name, func(t *testing.T) {
			// Symbols drawn from the pieces' characters make merges likely.
			var alphabet []int32
			for b := 0; b < 256; b++ {
				if tok.kind == kindByteLevel && tok.byteTok[b] >= 0 && (b >= 'a' && b <= 'z' || b == ' ') {
					alphabet = append(alphabet, tok.byteTok[b])
				}
			}
			if tok.kind == kindSPM {
				for _, ch := range []string{"▁", "a", "e", "t", "h", "o", "n", "s", "r", "i", "l", "d"} {
					if id, ok := tok.vocab[ch]; ok {
						alphabet = append(alphabet, id)
					}
				}
			}
			r := rand.New(rand.NewPCG(9, 9))
			w := &workspace{}
			for iter := 0; iter < 3000; iter++ {
				n := 1 + r.IntN(smallWord)
				word := make([]int32, n)
				for i := range word {
					word[i] = alphabet[r.IntN(len(alphabet))]
				}
				run := func(f func(*workspace)) []int32 {
					w.syms = w.syms[:0]
					for _, id := range word {
						w.addSym(id)
					}
					w.syms[n-1].next = -1
					f(w)
					var out []int32
					for i := int32(0); i >= 0; i = w.syms[i].next {
						out = append(out, w.syms[i].id)
					}
					return out
				}
				small, heap := run(tok.bpeSmall), run(tok.bpeHeap)
				if !slices.Equal(small, heap) {
					t.Fatalf("word %v: small %v, heap %v", word, small, heap)
				}
			}
		})
	}
}
