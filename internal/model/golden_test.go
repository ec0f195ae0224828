package model

import (
	"path/filepath"
	"testing"

	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// blockTable returns a scrambled table of n blocks (paging must not assume
// contiguous blocks).
func blockTable(n, numBlocks int) []int32 {
	bt := make([]int32, n)
	for i := range bt {
		bt[i] = int32((i*7 + 3) % numBlocks)
	}
	return bt
}

// checkGolden prefills the prompt in one Forward, then decodes one token per
// Forward, and checks every greedy choice after the prompt.
func checkGolden(t *testing.T, m *Model, pool *tensor.Pool, g *testmodels.Golden) {
	in, next, promptLen := g.Input, g.Next, g.PromptLen
	for i := 1; i < len(in); i++ {
		if in[i] != next[i-1] {
			t.Fatalf("golden file inconsistent at line %d", i+1)
		}
	}
	const bs = 16
	numBlocks := (len(in)+bs-1)/bs + 1
	if numBlocks%7 == 0 {
		numBlocks++
	}
	kv := NewKVCache(m.Config, numBlocks, bs)
	seq := Seq{BlockTable: blockTable((len(in)+bs-1)/bs, numBlocks), NeedLogits: true}
	ws := m.NewWorkspace(promptLen)
	logits := make([]float32, m.Config.VocabSize)

	seq.Start, seq.NumTokens = 0, promptLen
	if err := m.Forward(ws, pool, &Batch{Tokens: in[:promptLen], Seqs: []Seq{seq}}, kv, logits); err != nil {
		t.Fatal(err)
	}
	for pos := promptLen - 1; ; pos++ {
		if got := argmax(logits); got != next[pos] {
			t.Fatalf("step %d (position %d): greedy token %d, golden %d", pos+1, pos, got, next[pos])
		}
		if pos+1 >= len(in) {
			break
		}
		seq.Start, seq.NumTokens = pos+1, 1
		if err := m.Forward(ws, pool, &Batch{Tokens: in[pos+1 : pos+2], Seqs: []Seq{seq}}, kv, logits); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGolden(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	hfDir := testmodels.Dir(t, "stories260K-hf")
	pool := tensor.NewPool(2)
	defer pool.Close()
	sources := []struct{ name, path string }{
		{"gguf", filepath.Join(dir, "stories260K.gguf")},
		{"llama2c", filepath.Join(dir, "stories260K.bin")},
		{"hf", hfDir},
	}
	for _, src := range sources {
		m, err := Load(src.path, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		for _, name := range testmodels.GoldenNames {
			t.Run(src.name+"/"+name, func(t *testing.T) {
				checkGolden(t, m, pool, testmodels.LoadGolden(t, name))
			})
		}
	}
}

func TestLoadedConfigs(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	hfDir := testmodels.Dir(t, "stories260K-hf")
	want := Config{Dim: 64, HiddenDim: 172, NumLayers: 5, NumHeads: 8, NumKVHeads: 4, HeadDim: 8,
		VocabSize: 512, RMSNormEps: 1e-5, RopeTheta: 10000, TiedEmbeddings: true}
	tests := []struct {
		name, path string
		maxSeq     int
		tied       bool
	}{
		{"gguf", filepath.Join(dir, "stories260K.gguf"), 2048, false}, // output.weight stored explicitly
		{"llama2c", filepath.Join(dir, "stories260K.bin"), 512, true},
		{"hf", hfDir, 512, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(tc.path, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w := want
			w.MaxSeqLen, w.TiedEmbeddings = tc.maxSeq, tc.tied
			got := m.Config
			got.RMSNormEps = float32(float64(int(float64(got.RMSNormEps)*1e9+0.5)) / 1e9)
			if got != w {
				t.Fatalf("config %+v, want %+v", m.Config, w)
			}
		})
	}
}
