package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"govllm/internal/tensor"
)

// TestHiddenBatchInvariant: the final hidden states of a sequence are the
// same bits alone in one chunk, cut into chunks, and in a batch beside
// other sequences (one of which wants logits), on every test model.
func TestHiddenBatchInvariant(t *testing.T) {
	pool := tensor.NewPool(2)
	defer pool.Close()
	for name, m := range testModels(t) {
		t.Run(name, func(t *testing.T) {
			dim := m.Config.Dim
			toks := randTokens(11, m.Config.VocabSize, 7)
			other := randTokens(6, m.Config.VocabSize, 8)
			bt, bt2 := blockTable(2, 64), []int32{40, 41}
			alone := make([]float32, len(toks)*dim)
			kv := NewKVCache(m.Config, 64, 8)
			ws := m.NewWorkspace(4)
			b := &Batch{Tokens: toks, Seqs: []Seq{{NumTokens: len(toks), BlockTable: bt, Hidden: alone}}}
			if err := m.Forward(ws, pool, b, kv, nil); err != nil {
				t.Fatal(err)
			}
			// The same prompt in chunks of 4 and 7, the second beside
			// another sequence that wants logits.
			kv = NewKVCache(m.Config, 64, 8)
			got := make([]float32, len(toks)*dim)
			b = &Batch{Tokens: toks[:4], Seqs: []Seq{{NumTokens: 4, BlockTable: bt, Hidden: got[:4*dim]}}}
			if err := m.Forward(ws, nil, b, kv, nil); err != nil {
				t.Fatal(err)
			}
			logits := make([]float32, m.Config.VocabSize)
			b = &Batch{Tokens: slices.Concat(other, toks[4:]), Seqs: []Seq{
				{NumTokens: len(other), BlockTable: bt2, NeedLogits: true},
				{NumTokens: 7, Start: 4, BlockTable: bt, Hidden: got[4*dim:]},
			}}
			if err := m.Forward(ws, pool, b, kv, logits); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, alone) {
				t.Fatalf("hidden states differ in a batch (max diff %g)", maxDiff(got, alone))
			}
			if slices.Equal(alone[:dim], alone[dim:2*dim]) {
				t.Fatal("two positions have the same hidden state")
			}
		})
	}
}

func TestHiddenBufferChecked(t *testing.T) {
	m := testModels(t)["dummy-gqa"]
	b := &Batch{Tokens: []int32{1, 2}, Seqs: []Seq{{NumTokens: 2, BlockTable: []int32{0}, Hidden: make([]float32, m.Config.Dim)}}}
	err := m.Forward(m.NewWorkspace(2), nil, b, NewKVCache(m.Config, 4, 8), nil)
	if !errors.Is(err, ErrBatch) {
		t.Fatalf("short hidden buffer: %v", err)
	}
}

// TestProjectMatchesLogits checks that the logits Project computes
// from the hidden states Forward writes (Seq.Hidden) equal, bit for bit, the logits
// Forward computes for the last token of each prefix run on its own — the
// path prompt logprobs take — with another sequence in the same batch.
func TestProjectMatchesLogits(t *testing.T) {
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
					{NumTokens: n, BlockTable: []int32{1}, NeedLogits: true, Hidden: make([]float32, n*m.Config.Dim)},
				}}
				ws := m.NewWorkspace(n + 5)
				logits := make([]float32, 2*V)
				if err := m.Forward(ws, pool, b, kv, logits); err != nil {
					t.Fatal(err)
				}
				hid := b.Seqs[1].Hidden
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
