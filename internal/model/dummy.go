package model

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"govllm/internal/tensor"
)

// dummyShapes are the built-in random-weight model shapes.
var dummyShapes = map[string]Config{
	// Small and fast; its vocabulary fits the byte-level dummy tokenizer
	// (256 bytes, BOS 256, EOS 257).
	"default": {Dim: 288, HiddenDim: 768, NumLayers: 6, NumHeads: 6, NumKVHeads: 6, HeadDim: 48,
		VocabSize: 512, MaxSeqLen: 2048, RMSNormEps: 1e-5, RopeTheta: 10000, TiedEmbeddings: true},
	"stories110m": {Dim: 768, HiddenDim: 2048, NumLayers: 12, NumHeads: 12, NumKVHeads: 12, HeadDim: 64,
		VocabSize: 32000, MaxSeqLen: 1024, RMSNormEps: 1e-5, RopeTheta: 10000, TiedEmbeddings: true},
	"tinyllama-1.1b": {Dim: 2048, HiddenDim: 5632, NumLayers: 22, NumHeads: 32, NumKVHeads: 4, HeadDim: 64,
		VocabSize: 32000, MaxSeqLen: 2048, RMSNormEps: 1e-5, RopeTheta: 10000},
}

// DummyShapes lists the names DummyConfig accepts, sorted.
func DummyShapes() []string {
	var s []string
	for k := range dummyShapes {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// DummyConfig returns a built-in shape: "default" (dim 288, 6 layers, vocab
// 512: instant), "stories110m" or "tinyllama-1.1b".
func DummyConfig(name string) (Config, error) {
	c, ok := dummyShapes[name]
	if !ok {
		return Config{}, fmt.Errorf("%w: unknown dummy shape %q (have %v)", ErrConfig, name, DummyShapes())
	}
	return c, nil
}

// dummyStd is the target standard deviation of random weights (uniform).
const dummyStd = 0.02

// NewDummy returns a model with deterministic random weights: uniform with
// standard deviation 0.02 (norm weights 1), from a splitmix64 stream per
// 64K-value chunk so the result does not depend on the number of CPUs.
// dtype Q8_0 or Q4_0 quantizes the matrices whose width is a multiple of
// 32 (GGML's reference quantizers; the embeddings stay F32); any other
// dtype leaves F32. It panics if cfg is invalid (use Config.Validate
// first).
func NewDummy(cfg Config, dtype tensor.DType, seed uint64) *Model {
	name := ""
	switch dtype {
	case tensor.Q8_0:
		name = "q8_0"
	case tensor.Q4_0:
		name = "q4_0"
	}
	m, err := NewDummyQuantized(cfg, name, seed)
	if err != nil {
		panic(err)
	}
	return m
}

// NewDummyQuantized is NewDummy with the weights quantized as
// --quantization names them (QuantizationNames; "" for F32): the same
// formats, tensor by tensor, as llama-quantize would write for an F32
// file of this shape (quantmix.go), so the model has the memory of such a
// file. It returns an error for an invalid cfg or an unknown name.
func NewDummyQuantized(cfg Config, quantization string, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mix, err := lookupMix(quantization)
	if err != nil {
		return nil, err
	}
	c := cfg
	a := float32(dummyStd * math.Sqrt(3))
	const chunk = 1 << 16
	// mat makes the id-th random matrix of layer i, made of parts (their
	// roles pick the formats). Quantized, each matrix is converted as soon
	// as it is filled, so at most one F32 matrix is alive at a time.
	mat := func(rows, cols int, id uint64, i int, parts ...part) tensor.Mat {
		f := make([]float32, rows*cols)
		parallel((len(f)+chunk-1)/chunk, func(k int) {
			fillUniform(f[k*chunk:min((k+1)*chunk, len(f))], seed, id<<32|uint64(k), a)
		})
		m := f32Mat(rows, cols, f)
		mix.quantizeParts(&m, i, &c, parts...)
		return m
	}
	ones := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	m := &Model{Config: c, Layers: make([]Layer, c.NumLayers), Norm: ones(c.Dim)}
	m.Embed = mat(c.VocabSize, c.Dim, 0, 0)
	id := uint64(1)
	for i := range m.Layers {
		id = dummyLayer(&m.Layers[i], i, id, &c, mat, ones)
	}
	if c.TiedEmbeddings {
		m.Output = m.Embed
	} else {
		m.Output = mat(c.VocabSize, c.Dim, id, 0)
	}
	if mix != nil {
		mix.quantizeHead(m, c.TiedEmbeddings)
	}
	packWeights(m, c.TiedEmbeddings)
	m.initRope()
	return m, nil
}

// dummyLayer fills layer i with random matrices from id on and returns the
// next id.
func dummyLayer(L *Layer, i int, id uint64, c *Config, mat func(rows, cols int, id uint64, i int, parts ...part) tensor.Mat, ones func(int) []float32) uint64 {
	qd, kvd := c.QDim(), c.KVDim()
	*L = Layer{
		AttnNorm: ones(c.Dim), FFNNorm: ones(c.Dim),
		Wqkv: mat(qd+2*kvd, c.Dim, id, i, part{qd, roleAttnQ}, part{kvd, roleAttnK}, part{kvd, roleAttnV}),
		Wo:   mat(c.Dim, qd, id+1, i, part{c.Dim, roleAttnOut}),
	}
	id += 2
	ffn := func(hidden int, id uint64) Expert {
		return Expert{W13: mat(2*hidden, c.Dim, id, i, part{2 * hidden, roleOther}), W2: mat(c.Dim, hidden, id+1, i, part{c.Dim, roleFFNDown})}
	}
	if c.NumExperts == 0 {
		e := ffn(c.HiddenDim, id)
		L.W13, L.W2 = e.W13, e.W2
		return id + 2
	}
	L.Router = mat(c.NumExperts, c.Dim, id, i)
	L.Experts = make([]Expert, c.NumExperts)
	for e := range L.Experts {
		L.Experts[e] = ffn(c.HiddenDim, id+1)
		id += 2
	}
	id++
	if sd := c.SharedExpertDim; sd > 0 {
		L.Shared = ffn(sd, id)
		L.SharedGate = mat(1, c.Dim, id+2, i).F32
		id += 3
	}
	return id
}

// parallel runs fn(0..n-1) on up to NumCPU goroutines and waits for them.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.NumCPU(), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// fillUniform writes uniform values in [-a, a) from a splitmix64 stream.
func fillUniform(dst []float32, seed, stream uint64, a float32) {
	s := seed ^ (stream * 0x9E3779B97F4A7C15) ^ 0xD1B54A32D192ED03
	for i := range dst {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		// 24 random bits → [0,1), then to [-a, a).
		u := float32(z>>40) * (1.0 / (1 << 24))
		dst[i] = (2*u - 1) * a
	}
}
