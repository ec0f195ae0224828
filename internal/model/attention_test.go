package model

import (
	"fmt"
	"math"
	"testing"

	"govllm/internal/tensor"
)

func TestExpf(t *testing.T) {
	for x := float32(-90); x <= 0; x += 0.0137 {
		got, want := float64(expf(x)), math.Exp(float64(x))
		if want < 1e-37 {
			continue // float32 subnormals: expf flushes to 0 below -87.3
		}
		if math.Abs(got-want) > 3e-7*want {
			t.Fatalf("expf(%g) = %g, want %g", x, got, want)
		}
	}
	tests := []struct{ x, want float32 }{{0, 1}, {-100, 0}, {float32(math.Inf(-1)), 0}}
	for _, tc := range tests {
		if got := expf(tc.x); got != tc.want {
			t.Errorf("expf(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
}

func TestSoftmax(t *testing.T) {
	tests := [][]float32{{0}, {1, 2, 3}, {-1e30, 0, 5}, {7, 7, 7, 7}}
	for _, x := range tests {
		want := make([]float64, len(x))
		m := math.Inf(-1)
		for _, v := range x {
			m = math.Max(m, float64(v))
		}
		s := 0.0
		for i, v := range x {
			want[i] = math.Exp(float64(v) - m)
			s += want[i]
		}
		got := append([]float32(nil), x...)
		softmax(got)
		for i := range got {
			if math.Abs(float64(got[i])-want[i]/s) > 1e-6 {
				t.Fatalf("softmax(%v) = %v", x, got)
			}
		}
	}
}

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
