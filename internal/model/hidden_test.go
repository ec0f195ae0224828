package model

import (
	"errors"
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
