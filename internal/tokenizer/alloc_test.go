//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts are measured without it.

package tokenizer

import "testing"

// TestEncodeAllocatesOnlyTheResult holds doc.go's claim: with its scratch
// space pooled, Encode's only allocation is the returned slice.
func TestEncodeAllocatesOnlyTheResult(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are measured in full runs")
	}
	toks := map[string]*Tokenizer{"stories260K": stories260K(t)["tokenizer.json"], "dummy": NewDummy(300)}
	text := "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. 你好 😀"
	for name, tok := range toks {
		t.Run(name, func(t *testing.T) {
			tok.Encode(text, true) // warm the scratch pool
			if n := testing.AllocsPerRun(50, func() { tok.Encode(text, true) }); n > 1 {
				t.Errorf("Encode allocates %.1f times per call, want 1 (the result)", n)
			}
		})
	}
}
