package model

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// randTokens returns n deterministic token ids below vocab.
func randTokens(n, vocab int, seed uint32) []int32 {
	out := make([]int32, n)
	s := seed*2654435761 + 1
	for i := range out {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		out[i] = int32(s % uint32(vocab))
	}
	return out
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// runAlone feeds toks to a fresh cache in chunks of the given sizes and
// returns the logits after the last chunk.
func runAlone(t *testing.T, m *Model, pool *tensor.Pool, toks []int32, chunks []int) []float32 {
	return runAloneKV(t, m, pool, tensor.KVF32, toks, chunks)
}

// runAloneKV is runAlone with the KV cache in format codec.
func runAloneKV(t *testing.T, m *Model, pool *tensor.Pool, codec *tensor.KVCodec, toks []int32, chunks []int) []float32 {
	t.Helper()
	kv := NewKVCacheOf(codec, m.Config, 64, 8)
	ws := m.NewWorkspace(4)
	logits := make([]float32, m.Config.VocabSize)
	bt := blockTable((len(toks)+7)/8, 64)
	pos := 0
	for _, n := range chunks {
		b := &Batch{Tokens: toks[pos : pos+n], Seqs: []Seq{{NumTokens: n, Start: pos, BlockTable: bt, NeedLogits: true}}}
		if err := m.Forward(ws, pool, b, kv, logits); err != nil {
			t.Fatal(err)
		}
		pos += n
	}
	return logits
}

func testModels(t *testing.T) map[string]*Model {
	ms := map[string]*Model{}
	gqa := Config{Dim: 64, HiddenDim: 96, NumLayers: 2, NumHeads: 8, NumKVHeads: 2, HeadDim: 8,
		VocabSize: 300, MaxSeqLen: 64, RMSNormEps: 1e-5, RopeTheta: 10000}
	ms["dummy-gqa"] = NewDummy(gqa, tensor.F32, 1)
	ms["dummy-gqa-q8"] = NewDummy(gqa, tensor.Q8_0, 1)
	scaled := gqa
	scaled.MaxSeqLen = 16 // positions past the RoPE table are computed on the fly
	scaled.RopeScaling = &RopeScaling{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 8}
	ms["dummy-llama3-rope"] = NewDummy(scaled, tensor.F32, 2)
	wide := gqa
	wide.Dim, wide.NumHeads, wide.NumKVHeads, wide.HeadDim = 128, 4, 2, 32 // Dot/Axpy kernels in attention
	ms["dummy-wide-heads"] = NewDummy(wide, tensor.F32, 3)
	tall := gqa
	tall.HiddenDim = 4160 // W2 is 4160 wide: matMul splits batches into blocks of 64 rows
	ms["dummy-wide-hidden"] = NewDummy(tall, tensor.F32, 4)
	// The family fields: a sliding window of 5 on every other layer with
	// its own RoPE base, soft-caps, GELU, an embedding scale; with small
	// heads (attendSmall), GQA groups (attendGroup) and one query head per
	// KV head (attendTile); and a mixture of experts.
	fam := gqa
	fam.SlidingWindow, fam.SlidingPattern, fam.RopeThetaLocal = 5, 2, 100
	fam.AttnSoftcap, fam.FinalSoftcap, fam.Act, fam.EmbedScale, fam.AttnScale = 0.5, 3, ActGELUTanh, 8, 0.3
	ms["dummy-family-small-heads"] = NewDummy(fam, tensor.F32, 5)
	fam.Dim, fam.NumHeads, fam.NumKVHeads, fam.HeadDim = 128, 4, 2, 32
	ms["dummy-family-gqa"] = NewDummy(fam, tensor.Q8_0, 6)
	fam.NumKVHeads, fam.SlidingPattern = 4, 0
	ms["dummy-family-tiles"] = NewDummy(fam, tensor.F32, 7)
	moe := gqa
	moe.NumExperts, moe.NumExpertsUsed = 4, 2
	ms["dummy-moe"] = NewDummy(moe, tensor.Q8_0, 8)
	moe.SharedExpertDim, moe.NoExpertRenorm, moe.HiddenDim = 64, true, 32
	ms["dummy-moe-shared"] = NewDummy(moe, tensor.F32, 9)
	for _, sm := range testmodels.SyntheticModels(t) {
		if sm.Quant == "Q8_0" && sm.Arch != "llama" {
			m, err := Load(sm.Path, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ms["synthetic-"+sm.Arch] = m
		}
	}
	if dir := testmodels.Dir(t, "stories260K"); dir != "" {
		m, err := Load(filepath.Join(dir, "stories260K.gguf"), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ms["stories260K"] = m
	}
	return ms
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestBatchedMatchesAlone runs several sequences in one batch — a decode,
// a prefill split across two Forward calls, a sequence that needs no logits
// — and checks each against the same sequence run on its own, with each
// KV cache format the model accepts (float32, F16, Q8_0 for heads of 32).
func TestBatchedMatchesAlone(t *testing.T) {
	models := testModels(t)
	names := sortedKeys(models)
	for _, threads := range []int{1, 2} {
		pool := tensor.NewPool(threads)
		for _, name := range names {
			m := models[name]
			for _, codec := range []*tensor.KVCodec{tensor.KVF32, tensor.KVF16, tensor.KVQ8_0} {
				if m.Config.CheckKVCacheDType(codec) != nil {
					continue
				}
				testBatchedMatchesAlone(t, m, pool, codec, fmt.Sprintf("%s/kv=%s/threads=%d", name, codec.Name, threads))
			}
		}
		pool.Close()
	}
}

// testBatchedMatchesAlone is TestBatchedMatchesAlone for one model, pool
// and KV cache format.
func testBatchedMatchesAlone(t *testing.T, m *Model, pool *tensor.Pool, codec *tensor.KVCodec, name string) {
	t.Run(name, func(t *testing.T) {
		V := m.Config.VocabSize
		a := randTokens(20, V, 1) // decoded: 19 tokens first, then 1
		b := randTokens(80, V, 2) // prefill in chunks of 40 and 40
		c := randTokens(9, V, 3)  // one chunk, no logits wanted in step 1
		wantA := runAloneKV(t, m, pool, codec, a, []int{19, 1})
		wantB := runAloneKV(t, m, pool, codec, b, []int{40, 40})

		kv := NewKVCacheOf(codec, m.Config, 64, 8)
		ws := m.NewWorkspace(8)
		// Disjoint block tables in one cache.
		bt := func(first, n int) []int32 {
			s := make([]int32, n)
			for i := range s {
				s[i] = int32(first + (n-1-i)*3) // scattered, descending
			}
			return s
		}
		btA, btB, btC := bt(0, 3), bt(1, 10), bt(2, 2)
		// Step 1: a's first 19, b's first 40, c whole (no logits).
		step1 := &Batch{
			Tokens: append(append(append([]int32{}, a[:19]...), b[:40]...), c...),
			Seqs: []Seq{
				{NumTokens: 19, Start: 0, BlockTable: btA, NeedLogits: true},
				{NumTokens: 40, Start: 0, BlockTable: btB, NeedLogits: false},
				{NumTokens: 9, Start: 0, BlockTable: btC, NeedLogits: false},
			},
		}
		logits := make([]float32, 3*V)
		if err := m.Forward(ws, pool, step1, kv, logits); err != nil {
			t.Fatal(err)
		}
		// Step 2: a decodes its last token, b the rest of its prompt,
		// c a zero-token entry.
		step2 := &Batch{
			Tokens: append(append([]int32{}, a[19]), b[40:]...),
			Seqs: []Seq{
				{NumTokens: 1, Start: 19, BlockTable: btA, NeedLogits: true},
				{NumTokens: 0, Start: 9, BlockTable: btC},
				{NumTokens: 40, Start: 40, BlockTable: btB, NeedLogits: true},
			},
		}
		if err := m.Forward(ws, pool, step2, kv, logits); err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(logits[:V], wantA); d > 1e-4 {
			t.Errorf("seq a: max diff %g", d)
		}
		if d := maxDiff(logits[V:2*V], wantB); d > 1e-4 {
			t.Errorf("seq b: max diff %g", d)
		}
		// c's cache entries are intact: decode one more token of c.
		cNext := randTokens(1, V, 4)[0]
		step3 := &Batch{Tokens: []int32{cNext}, Seqs: []Seq{{NumTokens: 1, Start: 9, BlockTable: btC, NeedLogits: true}}}
		if err := m.Forward(ws, pool, step3, kv, logits); err != nil {
			t.Fatal(err)
		}
		wantC := runAloneKV(t, m, pool, codec, append(c, cNext), []int{9, 1})
		if d := maxDiff(logits[:V], wantC); d > 1e-4 {
			t.Errorf("seq c: max diff %g", d)
		}
	})
}

func TestForwardRejects(t *testing.T) {
	cfg := Config{Dim: 32, HiddenDim: 64, NumLayers: 1, NumHeads: 4, NumKVHeads: 2, HeadDim: 8,
		VocabSize: 50, MaxSeqLen: 32, RMSNormEps: 1e-5, RopeTheta: 10000}
	m := NewDummy(cfg, tensor.F32, 3)
	kv := NewKVCache(cfg, 4, 4)
	ws := m.NewWorkspace(4)
	logits := make([]float32, 2*cfg.VocabSize)
	otherKV := NewKVCache(Config{NumLayers: 2, NumKVHeads: 2, HeadDim: 8}, 4, 4)
	tests := []struct {
		name   string
		b      Batch
		kv     *KVCache
		logits []float32
	}{
		{"token out of range", Batch{Tokens: []int32{50}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}}}}, kv, logits},
		{"negative token", Batch{Tokens: []int32{-1}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}}}}, kv, logits},
		{"count mismatch", Batch{Tokens: []int32{1, 2}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}}}}, kv, logits},
		{"block table short", Batch{Tokens: []int32{1, 2}, Seqs: []Seq{{NumTokens: 2, Start: 3, BlockTable: []int32{0}}}}, kv, logits},
		{"block id out of range", Batch{Tokens: []int32{1}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{4}}}}, kv, logits},
		{"logits too small", Batch{Tokens: []int32{1, 2}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}, NeedLogits: true}, {NumTokens: 1, BlockTable: []int32{1}, NeedLogits: true}}}, kv, logits[:cfg.VocabSize]},
		{"logits without tokens", Batch{Seqs: []Seq{{NumTokens: 0, BlockTable: []int32{0}, NeedLogits: true}}}, kv, logits},
		{"negative start", Batch{Tokens: []int32{1}, Seqs: []Seq{{NumTokens: 1, Start: -1, BlockTable: []int32{0}}}}, kv, logits},
		{"cache of another model", Batch{Tokens: []int32{1}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}}}}, otherKV, logits},
		{"nil cache", Batch{Tokens: []int32{1}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}}}}, nil, logits},
	}
	t.Run("workspace of another model", func(t *testing.T) {
		other := NewDummy(Config{Dim: 64, HiddenDim: 64, NumLayers: 1, NumHeads: 4, NumKVHeads: 2, HeadDim: 16,
			VocabSize: 50, MaxSeqLen: 32, RMSNormEps: 1e-5, RopeTheta: 10000}, tensor.F32, 1)
		b := Batch{Tokens: []int32{1}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}}}}
		if err := m.Forward(other.NewWorkspace(1), nil, &b, kv, logits); !errors.Is(err, ErrBatch) {
			t.Fatalf("err = %v, want ErrBatch", err)
		}
		moe := cfg
		moe.NumExperts, moe.NumExpertsUsed = 2, 1 // the same shapes, but experts
		if err := NewDummy(moe, tensor.F32, 1).Forward(ws, nil, &b, kv, logits); !errors.Is(err, ErrBatch) {
			t.Fatalf("a dense model's workspace for a MoE model: err = %v, want ErrBatch", err)
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := m.Forward(ws, nil, &tc.b, tc.kv, tc.logits); !errors.Is(err, ErrBatch) {
				t.Fatalf("err = %v, want ErrBatch", err)
			}
		})
	}
}

// TestWorkspaceGrowsAndNoAllocs checks that a small Workspace grows for a
// large batch and that a steady decode step allocates nothing.
func TestWorkspaceGrowsAndNoAllocs(t *testing.T) {
	dense, _ := DummyConfig("default")
	fam := dense // every family field that adds work to a row
	fam.SlidingWindow, fam.SlidingPattern, fam.RopeThetaLocal = 8, 2, 100
	fam.AttnSoftcap, fam.FinalSoftcap, fam.Act, fam.EmbedScale = 3, 6, ActGELUTanh, 4
	moe := dense
	moe.NumExperts, moe.NumExpertsUsed, moe.SharedExpertDim = 4, 2, 64
	for _, tc := range []struct {
		name     string
		cfg      Config
		perLayer int // MatMul calls per layer of a decode step
	}{
		{"dense", dense, 4},
		{"family fields", fam, 4},
		{"experts", moe, 3 + 2*2 + 2}, // qkv, wo, router; two routed experts; the shared one
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			m := NewDummy(cfg, tensor.F32, 7)
			pool := tensor.NewPool(2)
			defer pool.Close()
			kv := NewKVCache(cfg, 16, 16)
			ws := m.NewWorkspace(1)
			logits := make([]float32, cfg.VocabSize)
			bt := []int32{3, 1, 4, 0, 2}
			prompt := randTokens(40, cfg.VocabSize, 9)
			if err := m.Forward(ws, pool, &Batch{Tokens: prompt, Seqs: []Seq{{NumTokens: 40, BlockTable: bt, NeedLogits: true}}}, kv, logits); err != nil {
				t.Fatal(err)
			}
			pos := 40
			b := &Batch{Tokens: []int32{5}, Seqs: []Seq{{NumTokens: 1, BlockTable: bt, NeedLogits: true}}}
			step := func() {
				b.Seqs[0].Start = pos
				if err := m.Forward(ws, pool, b, kv, logits); err != nil {
					t.Fatal(err)
				}
				pos++
			}
			step() // let the score buffers reach their size
			// The forward itself allocates nothing; tensor.Pool.MatMul may
			// still allocate its work closure (one per call, and the head's).
			limit := float64(tc.perLayer*cfg.NumLayers + 1)
			if a := testing.AllocsPerRun(10, step); a > limit {
				t.Fatalf("decode step allocates %v times, want ≤ %v", a, limit)
			}
		})
	}
}

// TestChunkedPrefillMatchesOneShot holds every model (sliding windows,
// soft-caps and experts included) to the same logits whether an 80-token
// prompt is prefilled at once, in uneven chunks, or token by token: each
// row's result depends only on its own position and the cache.
func TestChunkedPrefillMatchesOneShot(t *testing.T) {
	models := testModels(t)
	names := sortedKeys(models)
	pool := tensor.NewPool(2)
	defer pool.Close()
	ones := make([]int, 80)
	for i := range ones {
		ones[i] = 1
	}
	for _, name := range names {
		m := models[name]
		toks := randTokens(80, m.Config.VocabSize, 5)
		want := runAlone(t, m, pool, toks, []int{80})
		for _, chunks := range [][]int{{7, 13, 1, 59}, {33, 47}, ones} {
			t.Run(fmt.Sprintf("%s/%d-chunks", name, len(chunks)), func(t *testing.T) {
				if d := maxDiff(runAlone(t, m, pool, toks, chunks), want); d != 0 {
					t.Errorf("chunks %v: max diff %g from one forward", chunks, d)
				}
			})
		}
	}
}
