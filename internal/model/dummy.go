package model

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

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
// dtype Q8_0 quantizes the matrices whose width is a multiple of 32. It
// panics if cfg is invalid (use Config.Validate first).
func NewDummy(cfg Config, dtype tensor.DType, seed uint64) *Model {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	c := cfg
	qd, kvd := c.QDim(), c.KVDim()
	type job struct {
		dst []float32
		id  uint64
	}
	var jobs []job
	next := uint64(0)
	alloc := func(n int) []float32 {
		s := make([]float32, n)
		jobs = append(jobs, job{s, next})
		next++
		return s
	}
	ones := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	m := &Model{Config: c, Layers: make([]Layer, c.NumLayers), Norm: ones(c.Dim)}
	m.Embed = f32Mat(c.VocabSize, c.Dim, alloc(c.VocabSize*c.Dim))
	for i := range m.Layers {
		m.Layers[i] = Layer{
			AttnNorm: ones(c.Dim), FFNNorm: ones(c.Dim),
			Wqkv: f32Mat(qd+2*kvd, c.Dim, alloc((qd+2*kvd)*c.Dim)),
			Wo:   f32Mat(c.Dim, qd, alloc(c.Dim*qd)),
			W13:  f32Mat(2*c.HiddenDim, c.Dim, alloc(2*c.HiddenDim*c.Dim)),
			W2:   f32Mat(c.Dim, c.HiddenDim, alloc(c.Dim*c.HiddenDim)),
		}
	}
	if c.TiedEmbeddings {
		m.Output = m.Embed
	} else {
		m.Output = f32Mat(c.VocabSize, c.Dim, alloc(c.VocabSize*c.Dim))
	}

	// Fill in parallel, chunk by chunk; each chunk has its own stream.
	const chunk = 1 << 16
	type piece struct {
		dst    []float32
		stream uint64
	}
	var pieces []piece
	for _, j := range jobs {
		for off, k := 0, uint64(0); off < len(j.dst); off, k = off+chunk, k+1 {
			pieces = append(pieces, piece{j.dst[off:min(off+chunk, len(j.dst))], j.id<<32 | k})
		}
	}
	a := float32(dummyStd * math.Sqrt(3))
	workers := min(runtime.NumCPU(), len(pieces))
	var wg sync.WaitGroup
	var mu sync.Mutex
	nextPiece := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				p := nextPiece
				nextPiece++
				mu.Unlock()
				if p >= len(pieces) {
					return
				}
				fillUniform(pieces[p].dst, seed, pieces[p].stream, a)
			}
		}()
	}
	wg.Wait()

	if dtype == tensor.Q8_0 {
		for i := range m.Layers {
			L := &m.Layers[i]
			for _, w := range []*tensor.Mat{&L.Wqkv, &L.Wo, &L.W13, &L.W2} {
				quantizeMat(w)
			}
		}
		quantizeMat(&m.Output)
	}
	m.rope = newRopeTable(&m.Config, nil, min(c.MaxSeqLen, maxRopeTable))
	return m
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
