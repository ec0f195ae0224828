package model

import (
	"fmt"
	"testing"

	"govllm/internal/tensor"
)

// TestWideHeadsPrefill checks a long two-sequence prefill with heads wide
// enough for the tensor Dot/Axpy kernels against the same tokens fed one at
// a time.
func TestWideHeadsPrefill(t *testing.T) {
	cfg := Config{Dim: 128, HiddenDim: 160, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 32,
		VocabSize: 100, MaxSeqLen: 256, RMSNormEps: 1e-5, RopeTheta: 10000}
	m := NewDummy(cfg, tensor.F32, 11)
	for _, threads := range []int{1, 2} {
		t.Run(fmt.Sprint("threads=", threads), func(t *testing.T) {
			pool := tensor.NewPool(threads)
			defer pool.Close()
			a := randTokens(75, cfg.VocabSize, 5)
			b := randTokens(40, cfg.VocabSize, 6)
			kv := NewKVCache(cfg, 16, 16)
			btA, btB := []int32{9, 2, 7, 0, 5}, []int32{1, 12, 3}
			logits := make([]float32, 2*cfg.VocabSize)
			batch := &Batch{Tokens: append(append([]int32{}, a...), b...), Seqs: []Seq{
				{NumTokens: len(a), BlockTable: btA, NeedLogits: true},
				{NumTokens: len(b), BlockTable: btB, NeedLogits: true},
			}}
			ws := m.NewWorkspace(len(batch.Tokens))
			if err := m.Forward(ws, pool, batch, kv, logits); err != nil {
				t.Fatal(err)
			}
			for i, toks := range [][]int32{a, b} {
				one := make([]float32, cfg.VocabSize)
				kv1 := NewKVCache(cfg, 8, 16)
				ws1 := m.NewWorkspace(1)
				for p, tok := range toks {
					step := &Batch{Tokens: []int32{tok}, Seqs: []Seq{{NumTokens: 1, Start: p, BlockTable: []int32{0, 1, 2, 3, 4}, NeedLogits: true}}}
					if err := m.Forward(ws1, pool, step, kv1, one); err != nil {
						t.Fatal(err)
					}
				}
				if d := maxDiff(logits[i*cfg.VocabSize:(i+1)*cfg.VocabSize], one); d > 1e-4 {
					t.Fatalf("seq %d: prefill and token-by-token differ by %g", i, d)
				}
			}
		})
	}
}
