package model

import (
	"fmt"
	"math"
	"testing"

	"govllm/internal/tensor"
)

// TestKeepHiddenProjectMatchesLogits checks that the logits Project computes
// from the hidden states Forward keeps equal, bit for bit, the logits
// Forward computes for the last token of each prefix run on its own — the
// path prompt logprobs take — with another sequence in the same batch.
func TestKeepHiddenProjectMatchesLogits(t *testing.T) {
	models := testModels(t)
	for _, name := range sortedKeys(models) {
		m := models[name]
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", name, threads), func(t *testing.T) {
				pool := tensor.NewPool(threads)
				defer pool.Close()
				V, n := m.Config.VocabSize, 12
				toks := randTokens(n, V, 3)
				other := randTokens(5, V, 4)
				kv := NewKVCache(m.Config, 8, 16)
				b := &Batch{Tokens: append(append([]int32{}, other...), toks...), Seqs: []Seq{
					{NumTokens: 5, BlockTable: []int32{0}, NeedLogits: true},
					{NumTokens: n, BlockTable: []int32{1}, NeedLogits: true, KeepHidden: true},
				}}
				ws := m.NewWorkspace(n + 5)
				logits := make([]float32, 2*V)
				if err := m.Forward(ws, pool, b, kv, logits); err != nil {
					t.Fatal(err)
				}
				hid := ws.Hidden()
				if len(hid) != n*m.Config.Dim {
					t.Fatalf("Hidden holds %d floats, want %d rows of %d", len(hid), n, m.Config.Dim)
				}
				got := make([]float32, n*V)
				m.Project(pool, got, hid, n)
				for p := 0; p < n; p++ {
					want := logitsOfPool(t, m, pool, toks[:p+1])
					if i := firstDiff(got[p*V:(p+1)*V], want); i >= 0 {
						t.Fatalf("position %d: logit %d = %v from the kept hidden state, %v alone", p, i, got[p*V+i], want[i])
					}
				}
				if i := firstDiff(logits[V:], got[(n-1)*V:]); i >= 0 {
					t.Fatalf("the sampling row and the last kept row differ at %d", i)
				}
			})
		}
	}
}

// logitsOfPool is logitsOf on pool.
func logitsOfPool(t *testing.T, m *Model, pool *tensor.Pool, toks []int32) []float32 {
	t.Helper()
	kv := NewKVCache(m.Config, 8, 16)
	logits := make([]float32, m.Config.VocabSize)
	b := &Batch{Tokens: toks, Seqs: []Seq{{NumTokens: len(toks), BlockTable: []int32{0}, NeedLogits: true}}}
	if err := m.Forward(m.NewWorkspace(len(toks)), pool, b, kv, logits); err != nil {
		t.Fatal(err)
	}
	return logits
}

// firstDiff returns the first index where a and b differ in bits, or -1.
func firstDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
