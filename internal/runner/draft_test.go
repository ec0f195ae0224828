package runner

import (
	"slices"
	"testing"

	"govllm/internal/model"
	"govllm/internal/tensor"
)

// TestDraftModel: the draft model's proposal is its own greedy
// continuation, computed one token at a time from scratch (a reference
// that feeds every token through a fresh cache); a later proposal for the
// same request reuses the cached prefix and gives the same answer; a cache
// too small for two sequences drops the least recently used one, and
// Forget returns every block.
func TestDraftModel(t *testing.T) {
	cfg, err := model.DummyConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewDummy(cfg, tensor.F32, 5)
	seq := []int32{3, 9, 27, 81, 243, 217, 139, 161, 227, 169}
	const k = 5
	ref := greedyReference(t, m, seq, k)

	d, err := NewDraftModel(m, nil, DraftConfig{NumBlocks: 4, BlockSize: 4, Chunk: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Propose("a", nil, seq, k); !slices.Equal(got, ref) {
		t.Fatalf("first proposal %v, want %v", got, ref)
	}
	// The target accepted two drafts and corrected the third.
	longer := append(slices.Clone(seq), ref[0], ref[1], ref[2]+1)
	if got, want := d.Propose("a", nil, longer, 3), greedyReference(t, m, longer, 3); !slices.Equal(got, want) {
		t.Fatalf("second proposal %v, want %v", got, want)
	}
	// "b" needs all four blocks: "a" (least recently used) is dropped.
	if got := d.Propose("b", nil, seq[:8], 5); len(got) != 5 || d.seqs["a"] != nil {
		t.Fatalf("b's proposal %v; a still cached: %v", got, d.seqs["a"] != nil)
	}
	if got := d.Propose("a", nil, seq, 8); len(got) != 0 { // 17 positions, 16 slots
		t.Fatalf("a sequence longer than the cache got drafts %v", got)
	}
	d.Forget("b")
	d.Forget("a")
	if len(d.free) != 4 || len(d.seqs) != 0 {
		t.Fatalf("after Forget: %d free blocks, %d sequences", len(d.free), len(d.seqs))
	}
}

// greedyReference decodes k greedy tokens after seq with a fresh draft
// model whose every forward pass is one token.
func greedyReference(t *testing.T, m *model.Model, seq []int32, k int) []int32 {
	t.Helper()
	d, err := NewDraftModel(m, nil, DraftConfig{NumBlocks: 16, BlockSize: 4, Chunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := &draftSeq{}
	if !d.reserve("ref", s, len(seq)+k) {
		t.Fatal("reference cache too small")
	}
	var tok int32
	all := slices.Clone(seq)
	for i := range all {
		if tok, err = d.feed(s, i, all[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	var out []int32
	for range k {
		out = append(out, tok)
		all = append(all, tok)
		if tok, err = d.feed(s, len(all)-1, all[len(all)-1:]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestKVCacheDTypeChecked: the runner and the draft model keep their
// caches in the configured format, and refuse Q8_0 for heads that are
// not a multiple of 32 (the error names the flag).
func TestKVCacheDTypeChecked(t *testing.T) {
	cfg, err := model.DummyConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewDummy(cfg, tensor.F32, 5)
	for _, codec := range []*tensor.KVCodec{tensor.KVF16, tensor.KVQ8_0} {
		rc := DefaultConfig()
		rc.NumBlocks, rc.KVCacheDType = 8, codec
		r, rerr := New(m, nil, rc)
		d, derr := NewDraftModel(m, nil, DraftConfig{NumBlocks: 4, BlockSize: 4, Chunk: 3, KVCacheDType: codec})
		if cfg.HeadDim%codec.Block != 0 {
			if rerr == nil || derr == nil {
				t.Fatalf("%s accepted for heads of %d: %v, %v", codec.Name, cfg.HeadDim, rerr, derr)
			}
			continue
		}
		if rerr != nil || derr != nil {
			t.Fatalf("%s: %v, %v", codec.Name, rerr, derr)
		}
		if r.kv.Codec != codec || d.kv.Codec != codec {
			t.Fatalf("%s: caches in %s and %s", codec.Name, r.kv.Codec.Name, d.kv.Codec.Name)
		}
	}
}
