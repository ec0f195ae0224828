// Command sbs-gguf writes a Llama-architecture GGUF file of a named shape with
// random F32 weights and a real tokenizer, for scripts/sbs.sh: the same file
// is then quantized with llama-quantize and run by llama-bench and by
// `govllm generate`.
//
//	go run ./scripts/sbs-gguf -shape tinyllama-1.1b \
//	    -vocab ../shared/models/vocab/ggml-vocab-llama-spm.gguf -o /tmp/tinyllama-f32.gguf
//
// The tokenizer metadata (tokenizer.ggml.*) is copied from -vocab, whose
// vocabulary size the shape must have (the Llama SPM file has 32,000). The
// weights are uniform with standard deviation 0.02 (norms 1): each tensor is
// a window of one random pool at its own offset, so a 3B-class shape needs
// about 0.5 GB of memory rather than its 12 GB of F32. Speed does not depend
// on the values, only on the shapes; the text generated is meaningless.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"govllm/internal/gguf"
	"govllm/internal/model"
)

// shape is a Llama model's dimensions.
type shape struct {
	dim, hidden, layers, heads, kvHeads, headDim, ctx int
	tied                                              bool
}

// extraShapes are the shapes model.DummyConfig does not have.
var extraShapes = map[string]shape{
	// Llama-3.2-3B's layers with a 32k vocabulary: every width a multiple
	// of 256, so each K-quant applies to every matrix.
	"llama-3b": {dim: 3072, hidden: 8192, layers: 28, heads: 24, kvHeads: 8, headDim: 128, ctx: 2048},
}

func shapeNames() []string {
	names := model.DummyShapes()
	for k := range extraShapes {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func lookup(name string) (shape, error) {
	if s, ok := extraShapes[name]; ok {
		return s, nil
	}
	c, err := model.DummyConfig(name)
	if err != nil {
		return shape{}, fmt.Errorf("unknown shape %q (have %s)", name, strings.Join(shapeNames(), ", "))
	}
	return shape{dim: c.Dim, hidden: c.HiddenDim, layers: c.NumLayers, heads: c.NumHeads, kvHeads: c.NumKVHeads,
		headDim: c.HeadDim, ctx: c.MaxSeqLen, tied: c.TiedEmbeddings}, nil
}

// pool hands out windows of one random little-endian float32 array.
type pool struct {
	data []byte // 4 bytes a value
	next uint64
}

func newPool(values int, seed uint64) *pool {
	p := &pool{data: make([]byte, 4*values), next: seed}
	a := 0.02 * math.Sqrt(3) // uniform on [-a, a): standard deviation 0.02
	s := seed
	for i := 0; i < values; i++ {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		u := float64(z>>40) / (1 << 24)
		binary.LittleEndian.PutUint32(p.data[4*i:], math.Float32bits(float32((2*u-1)*a)))
	}
	return p
}

// window returns n values starting at a pseudo-random, 64-value-aligned offset.
func (p *pool) window(n int) []byte {
	room := len(p.data)/4 - n
	p.next = p.next*6364136223846793005 + 1442695040888963407
	off := int(p.next>>33) % (room/64 + 1) * 64
	return p.data[4*off : 4*(off+n)]
}

func ones(n int) []byte {
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(1))
	}
	return b
}

func run() error {
	name := flag.String("shape", "stories110m", "model shape: "+strings.Join(shapeNames(), ", "))
	vocab := flag.String("vocab", "", "GGUF file whose tokenizer.ggml.* metadata is copied (e.g. ggml-vocab-llama-spm.gguf)")
	out := flag.String("o", "", "output .gguf path")
	seed := flag.Uint64("seed", 1, "seed of the random weights")
	flag.Parse()
	if *vocab == "" || *out == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("need -vocab and -o")
	}
	s, err := lookup(*name)
	if err != nil {
		return err
	}
	vf, err := gguf.ReadFile(*vocab)
	if err != nil {
		return err
	}
	tokens, err := vf.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return err
	}
	nv := len(tokens)
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "general.name", Value: "sbs-" + *name + "-random"},
		{Key: "general.file_type", Value: uint32(0)}, // all F32
		{Key: "llama.block_count", Value: uint32(s.layers)},
		{Key: "llama.context_length", Value: uint32(s.ctx)},
		{Key: "llama.embedding_length", Value: uint32(s.dim)},
		{Key: "llama.feed_forward_length", Value: uint32(s.hidden)},
		{Key: "llama.attention.head_count", Value: uint32(s.heads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(s.kvHeads)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(1e-5)},
		{Key: "llama.rope.dimension_count", Value: uint32(s.headDim)},
		{Key: "llama.rope.freq_base", Value: float32(10000)},
		{Key: "llama.vocab_size", Value: uint32(nv)},
	}
	for _, k := range vf.Keys {
		if strings.HasPrefix(k, "tokenizer.") {
			kvs = append(kvs, gguf.KV{Key: k, Value: vf.Metadata[k]})
		}
	}
	qd, kvd := s.heads*s.headDim, s.kvHeads*s.headDim
	largest := max(nv*s.dim, s.hidden*s.dim, qd*s.dim)
	p := newPool(largest+(16<<20), *seed)
	// mat is a matrix of rows×cols in ggml order: dims {cols, rows}.
	mat := func(name string, rows, cols int) gguf.TensorData {
		return gguf.TensorData{Name: name, Dims: []uint64{uint64(cols), uint64(rows)}, Type: gguf.GGMLTypeF32, Data: p.window(rows * cols)}
	}
	vec := func(name string, n int) gguf.TensorData {
		return gguf.TensorData{Name: name, Dims: []uint64{uint64(n)}, Type: gguf.GGMLTypeF32, Data: ones(n)}
	}
	ts := []gguf.TensorData{mat("token_embd.weight", nv, s.dim), vec("output_norm.weight", s.dim)}
	if !s.tied {
		ts = append(ts, mat("output.weight", nv, s.dim))
	}
	for i := 0; i < s.layers; i++ {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			vec(b+"attn_norm.weight", s.dim),
			mat(b+"attn_q.weight", qd, s.dim),
			mat(b+"attn_k.weight", kvd, s.dim),
			mat(b+"attn_v.weight", kvd, s.dim),
			mat(b+"attn_output.weight", s.dim, qd),
			vec(b+"ffn_norm.weight", s.dim),
			mat(b+"ffn_gate.weight", s.hidden, s.dim),
			mat(b+"ffn_up.weight", s.hidden, s.dim),
			mat(b+"ffn_down.weight", s.dim, s.hidden),
		)
	}
	tmp := *out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := gguf.Encode(w, kvs, ts); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, *out)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sbs-gguf:", err)
		os.Exit(1)
	}
}
