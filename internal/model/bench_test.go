package model

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"govllm/internal/cputime"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// benchModel is built once per process (tinyllama-1.1b is 4.4 GB of F32).
type benchModel struct {
	once sync.Once
	m    *Model
	make func(b *testing.B) *Model
}

var benchModels = []struct {
	name string
	bm   *benchModel
}{
	{"stories260K", &benchModel{make: func(b *testing.B) *Model {
		m, err := Load(filepath.Join(testmodels.Dir(b, "stories260K"), "stories260K.gguf"), LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return m
	}}},
	{"stories110m-f32", &benchModel{make: dummyMaker("stories110m", tensor.F32)}},
	{"stories110m-f32-rows", &benchModel{make: rowsMaker("stories110m")}},
	{"stories110m-q8_0", &benchModel{make: dummyMaker("stories110m", tensor.Q8_0)}},
	{"stories110m-q8_0-ggml", &benchModel{make: ggmlMaker("stories110m")}},
	{"stories110m-q4_0", &benchModel{make: dummyMaker("stories110m", tensor.Q4_0)}},
	{"tinyllama-1.1b-f32", &benchModel{make: dummyMaker("tinyllama-1.1b", tensor.F32)}},
	{"tinyllama-1.1b-f32-rows", &benchModel{make: rowsMaker("tinyllama-1.1b")}},
	{"tinyllama-1.1b-q8_0", &benchModel{make: dummyMaker("tinyllama-1.1b", tensor.Q8_0)}},
	{"tinyllama-1.1b-q8_0-ggml", &benchModel{make: ggmlMaker("tinyllama-1.1b")}},
	{"tinyllama-1.1b-q4_0", &benchModel{make: dummyMaker("tinyllama-1.1b", tensor.Q4_0)}},
	{"tinyllama-1.1b-q4_k_m", &benchModel{make: dummyMixMaker("tinyllama-1.1b", "q4_k_m")}},
	// The architecture families, on their synthetic llama.cpp conformance
	// files (2 layers, dim 256: per-token overheads weigh more than in
	// real models).
	{"synthetic-llama-q8_0", &benchModel{make: syntheticMaker("llama")}},
	{"synthetic-qwen2-q8_0", &benchModel{make: syntheticMaker("qwen2")}},
	{"synthetic-qwen3-q8_0", &benchModel{make: syntheticMaker("qwen3")}},
	{"synthetic-qwen3moe-q8_0", &benchModel{make: syntheticMaker("qwen3moe")}},
	{"synthetic-phi3-q8_0", &benchModel{make: syntheticMaker("phi3")}},
	{"synthetic-gemma2-q8_0", &benchModel{make: syntheticMaker("gemma2")}},
	{"synthetic-gemma3-q8_0", &benchModel{make: syntheticMaker("gemma3")}},
}

// syntheticMaker loads shared/models/synthetic/<arch>/<arch>-Q8_0.gguf.
func syntheticMaker(arch string) func(b *testing.B) *Model {
	return func(b *testing.B) *Model {
		m, err := Load(filepath.Join(testmodels.Dir(b, "synthetic"), arch, arch+"-Q8_0.gguf"), LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
}

// ggmlMaker makes the Q8_0 dummy model with its matrices left in GGML
// blocks (tensor.UnpackQ8): the kernels before the packed layout, as a
// baseline for the packed ones.
func ggmlMaker(shape string) func(b *testing.B) *Model {
	return unpackedMaker(shape, tensor.Q8_0, tensor.UnpackQ8)
}

// rowsMaker makes the F32 dummy model with its matrices left in rows
// (tensor.UnpackF32): the row-major kernels, as a baseline for the packed
// outer-product ones.
func rowsMaker(shape string) func(b *testing.B) *Model {
	return unpackedMaker(shape, tensor.F32, tensor.UnpackF32)
}

// unpackedMaker makes the dummy model with unpack applied to every matmul
// weight.
func unpackedMaker(shape string, dt tensor.DType, unpack func(*tensor.Mat)) func(b *testing.B) *Model {
	return func(b *testing.B) *Model {
		m := dummyMaker(shape, dt)(b)
		for i := range m.Layers {
			for _, w := range m.Layers[i].matrices() {
				unpack(w)
			}
		}
		unpack(&m.Output)
		return m
	}
}

func dummyMaker(shape string, dt tensor.DType) func(b *testing.B) *Model {
	return func(b *testing.B) *Model {
		c, err := DummyConfig(shape)
		if err != nil {
			b.Fatal(err)
		}
		return NewDummy(c, dt, 1)
	}
}

// dummyMixMaker makes the dummy model quantized as --quantization names
// it (the tensor-by-tensor formats of llama-quantize's file type).
func dummyMixMaker(shape, quantization string) func(b *testing.B) *Model {
	return func(b *testing.B) *Model {
		c, err := DummyConfig(shape)
		if err != nil {
			b.Fatal(err)
		}
		m, err := NewDummyQuantized(c, quantization, 1)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
}

func (bm *benchModel) get(b *testing.B) *Model {
	bm.once.Do(func() { bm.m = bm.make(b) })
	if bm.m == nil {
		b.Skip("model unavailable")
	}
	return bm.m
}

const benchPrompt = 128

// reportSpeed reports tokens per wall-clock second ("tok/s") and per
// CPU-second of the process ("tok/cpu-s"). On a shared machine the second
// is the steadier figure: with one thread it is the speed the forward would
// have with a core to itself; with more threads, wall speed × threads is
// bounded by it.
func reportSpeed(b *testing.B, tokens int, cpu time.Duration) {
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tok/s")
	if cpu > 0 {
		b.ReportMetric(float64(tokens)/cpu.Seconds(), "tok/cpu-s")
	}
}

// BenchmarkPrefill: one 128-token prompt per iteration.
func BenchmarkPrefill(b *testing.B) {
	for _, bmod := range benchModels {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", bmod.name, threads), func(b *testing.B) {
				benchPrefill(b, bmod.bm.get(b), threads, benchPrompt)
			})
		}
	}
}

// BenchmarkPrefillLong: a 1024-token prompt, where attention is a visible
// share of the work (stories110m shape).
func BenchmarkPrefillLong(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("stories110m-f32/threads=%d", threads), func(b *testing.B) {
			benchPrefill(b, benchModels[1].bm.get(b), threads, 1024)
		})
	}
}

func benchPrefill(b *testing.B, m *Model, threads, n int) {
	pool := tensor.NewPool(threads)
	defer pool.Close()
	kv := NewKVCache(m.Config, (n+15)/16, 16)
	bt := make([]int32, (n+15)/16)
	for i := range bt {
		bt[i] = int32(i)
	}
	ws := m.NewWorkspace(n)
	logits := make([]float32, m.Config.VocabSize)
	batch := &Batch{Tokens: randTokens(n, m.Config.VocabSize, 1),
		Seqs: []Seq{{NumTokens: n, BlockTable: bt, NeedLogits: true}}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for range b.N {
		if err := m.Forward(ws, pool, batch, kv, logits); err != nil {
			b.Fatal(err)
		}
	}
	reportSpeed(b, n*b.N, cputime.Process()-cpu0)
}

// BenchmarkDecode: one token of a single sequence per iteration, at
// positions 0..127 in turn (as llama-bench's tg128).
func BenchmarkDecode(b *testing.B) {
	for _, bmod := range benchModels {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", bmod.name, threads), func(b *testing.B) {
				m := bmod.bm.get(b)
				pool := tensor.NewPool(threads)
				defer pool.Close()
				kv := NewKVCache(m.Config, benchPrompt/16, 16)
				bt := make([]int32, benchPrompt/16)
				for i := range bt {
					bt[i] = int32(i)
				}
				ws := m.NewWorkspace(1)
				logits := make([]float32, m.Config.VocabSize)
				toks := randTokens(benchPrompt, m.Config.VocabSize, 2)
				batch := &Batch{Tokens: toks[:1], Seqs: []Seq{{NumTokens: 1, BlockTable: bt, NeedLogits: true}}}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cputime.Process()
				for i := range b.N {
					p := i % benchPrompt
					batch.Tokens = toks[p : p+1]
					batch.Seqs[0].Start = p
					if err := m.Forward(ws, pool, batch, kv, logits); err != nil {
						b.Fatal(err)
					}
				}
				reportSpeed(b, b.N, cputime.Process()-cpu0)
			})
		}
	}
}

// BenchmarkDecodeBatch: one decode step of s sequences (one token each, at
// positions 64..127 in turn) per iteration: the forward pass of a served
// step at s streams. tok/cpu-s counts the s tokens.
func BenchmarkDecodeBatch(b *testing.B) {
	for _, bmod := range benchModels {
		for _, s := range []int{16, 64} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/seqs=%d/threads=%d", bmod.name, s, threads), func(b *testing.B) {
					m := bmod.bm.get(b)
					pool := tensor.NewPool(threads)
					defer pool.Close()
					const perSeq = benchPrompt / 16
					kv := NewKVCache(m.Config, s*perSeq, 16)
					batch := &Batch{Tokens: randTokens(s, m.Config.VocabSize, 3), Seqs: make([]Seq, s)}
					for i := range batch.Seqs {
						bt := make([]int32, perSeq)
						for j := range bt {
							bt[j] = int32(i*perSeq + j)
						}
						batch.Seqs[i] = Seq{NumTokens: 1, BlockTable: bt, NeedLogits: true}
					}
					ws := m.NewWorkspace(s)
					logits := make([]float32, s*m.Config.VocabSize)
					b.ReportAllocs()
					b.ResetTimer()
					cpu0 := cputime.Process()
					for i := range b.N {
						for j := range batch.Seqs {
							batch.Seqs[j].Start = benchPrompt/2 + i%(benchPrompt/2)
						}
						if err := m.Forward(ws, pool, batch, kv, logits); err != nil {
							b.Fatal(err)
						}
					}
					reportSpeed(b, s*b.N, cputime.Process()-cpu0)
				})
			}
		}
	}
}
