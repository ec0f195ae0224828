package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"govllm/internal/gguf"
)

// tinyGGUF encodes a one-layer random llama model (dim 32, vocab 8).
func tinyGGUF(tb testing.TB) []byte {
	tb.Helper()
	c := Config{Dim: 32, HiddenDim: 32, NumLayers: 1, NumHeads: 2, NumKVHeads: 1, HeadDim: 16,
		VocabSize: 8, MaxSeqLen: 16, RMSNormEps: 1e-5, RopeTheta: 10000}
	f32 := func(n int, seed uint64) []byte {
		v := make([]float32, n)
		fillUniform(v, seed, 0, 0.05)
		b := make([]byte, 4*n)
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	mat := func(name string, rows, cols int, seed uint64) gguf.TensorData {
		return gguf.TensorData{Name: name, Dims: []uint64{uint64(cols), uint64(rows)}, Type: gguf.GGMLTypeF32, Data: f32(rows*cols, seed)}
	}
	vec := func(name string) gguf.TensorData {
		return gguf.TensorData{Name: name, Dims: []uint64{uint64(c.Dim)}, Type: gguf.GGMLTypeF32, Data: f32(c.Dim, 9)}
	}
	ts := []gguf.TensorData{
		mat("token_embd.weight", c.VocabSize, c.Dim, 1), vec("output_norm.weight"),
		vec("blk.0.attn_norm.weight"), vec("blk.0.ffn_norm.weight"),
		mat("blk.0.attn_q.weight", c.QDim(), c.Dim, 2), mat("blk.0.attn_k.weight", c.KVDim(), c.Dim, 3),
		mat("blk.0.attn_v.weight", c.KVDim(), c.Dim, 4), mat("blk.0.attn_output.weight", c.Dim, c.QDim(), 5),
		mat("blk.0.ffn_gate.weight", c.HiddenDim, c.Dim, 6), mat("blk.0.ffn_up.weight", c.HiddenDim, c.Dim, 7),
		mat("blk.0.ffn_down.weight", c.Dim, c.HiddenDim, 8),
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "llama.embedding_length", Value: uint32(c.Dim)},
		{Key: "llama.feed_forward_length", Value: uint32(c.HiddenDim)},
		{Key: "llama.block_count", Value: uint32(c.NumLayers)},
		{Key: "llama.attention.head_count", Value: uint32(c.NumHeads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(c.NumKVHeads)},
		{Key: "llama.context_length", Value: uint32(c.MaxSeqLen)},
	}
	var buf bytes.Buffer
	if err := gguf.Encode(&buf, kvs, ts); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzLoad: any bytes given as a model file load or fail with an error;
// a model that loads runs a forward step.
func FuzzLoad(f *testing.F) {
	seed := tinyGGUF(f)
	f.Add(seed)
	llama2c := make([]byte, 28)
	for i, v := range []int32{32, 32, 1, 2, 1, 8, 16} {
		binary.LittleEndian.PutUint32(llama2c[4*i:], uint32(v))
	}
	f.Add(append(llama2c, make([]byte, 4*(8*32+32*2+32*32+32*16*2+32*32+32*3*32+32+16*16))...))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "m")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(p, LoadOptions{})
		if err != nil {
			return
		}
		if m.Config.Dim*m.Config.VocabSize > 1<<24 {
			return // valid but large: skip the forward
		}
		kv := NewKVCache(m.Config, 1, 4)
		logits := make([]float32, m.Config.VocabSize)
		batch := &Batch{Tokens: []int32{0}, Seqs: []Seq{{NumTokens: 1, BlockTable: []int32{0}, NeedLogits: true}}}
		if err := m.Forward(m.NewWorkspace(1), nil, batch, kv, logits); err != nil {
			t.Fatal(err)
		}
	})
}

func TestFuzzSeedsLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := os.WriteFile(p, tinyGGUF(t), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Config.TiedEmbeddings || m.Config.HeadDim != 16 || m.Config.RopeTheta != 10000 {
		t.Fatalf("config %+v", m.Config)
	}
}
