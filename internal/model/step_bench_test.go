package model

import (
	"fmt"
	"runtime"
	"testing"

	"govllm/internal/cputime"
	"govllm/internal/tensor"
)

// stepBenchModels are the shapes of the batched decode-step benchmarks.
var stepBenchModels = []struct {
	name string
	bm   *benchModel
}{
	{"stories110m-f32", namedBenchModel("stories110m-f32", "stories110m", tensor.F32)},
	{"tinyllama-1.1b-f32", namedBenchModel("tinyllama-1.1b-f32", "tinyllama-1.1b", tensor.F32)},
	{"tinyllama-1.1b-q8_0", namedBenchModel("tinyllama-1.1b-q8_0", "tinyllama-1.1b", tensor.Q8_0)},
	{"stories110m-f32-rows", namedBenchModel("stories110m-f32-rows", "stories110m", tensor.F32)},
	{"tinyllama-1.1b-q4_k_m", namedBenchModel("tinyllama-1.1b-q4_k_m", "tinyllama-1.1b", tensor.F32)},
}

// namedBenchModel returns benchModels' entry of that name (so that a model
// is built once per process), or a new dummy of the shape.
func namedBenchModel(name, shape string, dt tensor.DType) *benchModel {
	for _, e := range benchModels {
		if e.name == name {
			return e.bm
		}
	}
	return &benchModel{make: dummyMaker(shape, dt)}
}

// decodeStep is one decode step of seqs sequences, each with ctx tokens of
// context already in the cache (the KV values are zeros: attention costs
// the same whatever they hold).
type decodeStep struct {
	m      *Model
	ws     *Workspace
	kv     *KVCache
	batch  *Batch
	logits []float32
}

func newDecodeStep(m *Model, seqs, ctx int) *decodeStep {
	return newDecodeStepKV(m, tensor.KVF32, seqs, ctx)
}

// newDecodeStepKV is newDecodeStep with the KV cache in format codec.
func newDecodeStepKV(m *Model, codec *tensor.KVCodec, seqs, ctx int) *decodeStep {
	const bs = 16
	per := (ctx + 1 + bs - 1) / bs
	kv := NewKVCacheOf(codec, m.Config, seqs*per, bs)
	b := &Batch{Tokens: randTokens(seqs, m.Config.VocabSize, 3)}
	for s := range seqs {
		bt := make([]int32, per)
		for i := range bt {
			// Interleave the sequences' blocks, as a busy block pool does.
			bt[i] = int32(i*seqs + s)
		}
		b.Seqs = append(b.Seqs, Seq{NumTokens: 1, Start: ctx, BlockTable: bt, NeedLogits: true})
	}
	return &decodeStep{m: m, ws: m.NewWorkspace(seqs), kv: kv, batch: b,
		logits: make([]float32, seqs*m.Config.VocabSize)}
}

// matmuls runs only the weight matrix products of the step (the same
// shapes and weights as Forward), for the matmul / everything-else split.
func (d *decodeStep) matmuls(pool *tensor.Pool) {
	m, ws, n := d.m, d.ws, len(d.batch.Tokens)
	c := &m.Config
	dim, qd, kvd, hid := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	for l := range m.Layers {
		L := &m.Layers[l]
		pool.MatMul(ws.qkv[:n*(qd+2*kvd)], ws.xb[:n*dim], n, &L.Wqkv)
		pool.MatMul(ws.xo[:n*dim], ws.att[:n*qd], n, &L.Wo)
		pool.MatMul(ws.h13[:n*2*hid], ws.xb[:n*dim], n, &L.W13)
		pool.MatMul(ws.xo[:n*dim], ws.hb[:n*hid], n, &L.W2)
	}
	pool.MatMul(d.logits, ws.lx[:n*dim], n, &m.Output)
}

// BenchmarkDecodeStep: one decode step of 1 sequence (1 and 2 threads) and
// of 64 sequences (2 threads) at context 64 (a served single-stream and
// 64-stream decode step). "forward" is Model.Forward; "matmuls" only
// its weight matrix products, so forward − matmuls is everything else
// (attention, RoPE, norms, SwiGLU, embedding, pool hand-offs). "served" is
// Model.Forward on the pool `govllm serve` runs (its default --engine-nice
// and --spare-procs: locked threads of lowered priority, one more Go
// processor than threads), so served − forward is what those cost.
// tok/cpu-s is the figure to compare on a shared machine.
func BenchmarkDecodeStep(b *testing.B) {
	const ctx = 64
	for _, bmod := range stepBenchModels {
		for _, st := range []struct{ seqs, threads int }{{1, 1}, {1, 2}, {64, 2}} {
			for _, part := range []string{"forward", "matmuls", "served"} {
				benchDecodeStep(b, bmod.name, bmod.bm, st.seqs, st.threads, ctx, part)
			}
		}
	}
}

// benchDecodeStep is one case of BenchmarkDecodeStep on a pool of threads.
func benchDecodeStep(b *testing.B, name string, bm *benchModel, seqs, threads, ctx int, part string) {
	b.Run(fmt.Sprintf("%s/seqs=%d/threads=%d/%s", name, seqs, threads, part), func(b *testing.B) {
		m := bm.get(b)
		pool := tensor.NewPool(threads)
		if part == "served" {
			pool.Close()
			var err error
			if pool, err = tensor.NewPoolWith(threads, tensor.PoolOptions{Nice: 10}); err != nil {
				b.Skip(err) // the system refuses lower thread priorities
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + 1))
		}
		defer pool.Close()
		d := newDecodeStep(m, seqs, ctx)
		if err := m.Forward(d.ws, pool, d.batch, d.kv, d.logits); err != nil {
			b.Fatal(err) // also sizes the workspace
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cputime.Process()
		for range b.N {
			if part == "matmuls" {
				d.matmuls(pool)
			} else if err := m.Forward(d.ws, pool, d.batch, d.kv, d.logits); err != nil {
				b.Fatal(err)
			}
		}
		reportSpeed(b, seqs*b.N, cputime.Process()-cpu0)
	})
}

// BenchmarkAttention: one layer's attention of a decode step, 64 rows at
// position ctx each, on one thread (the model's weights are not needed:
// only the shape). cpu-ns/row is per row and layer.
func BenchmarkAttention(b *testing.B) {
	for _, shape := range []string{"stories110m", "tinyllama-1.1b"} {
		for _, ctx := range []int{64, 256} {
			b.Run(fmt.Sprintf("%s/seqs=64/ctx=%d", shape, ctx), func(b *testing.B) {
				cfg, err := DummyConfig(shape)
				if err != nil {
					b.Fatal(err)
				}
				cfg.NumLayers = 1
				m := &Model{Config: cfg}
				const seqs = 64
				// One thread: CPU time per row is the figure (steady on a
				// shared machine); rows are independent.
				var pool *tensor.Pool
				d := &decodeStep{m: m}
				d.ws = m.NewWorkspace(seqs)
				const bs = 16
				per := (ctx + 1 + bs - 1) / bs
				kv := NewKVCache(cfg, seqs*per, bs)
				batch := &Batch{Tokens: make([]int32, seqs)}
				for s := range seqs {
					bt := make([]int32, per)
					for i := range bt {
						bt[i] = int32(i*seqs + s)
					}
					batch.Seqs = append(batch.Seqs, Seq{NumTokens: 1, Start: ctx, BlockTable: bt})
					d.ws.pos[s], d.ws.seqOf[s] = ctx, int32(s)
				}
				for i := range d.ws.qkv {
					d.ws.qkv[i] = float32(i%7) * 0.01
				}
				d.ws.planAttention(m, batch, pool)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cputime.Process()
				for range b.N {
					m.attention(d.ws, pool, batch, kv, 0, ctx)
				}
				b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N*seqs), "cpu-ns/row")
			})
		}
	}
}

// BenchmarkPrefillStep: one step that prefills many 32-token prompts at
// once, as a server does when a burst of requests arrives (2,048 tokens for
// stories110m; 512 for tinyllama, to keep an iteration short), 2 threads.
func BenchmarkPrefillStep(b *testing.B) {
	const prompt = 32
	for _, c := range []struct {
		name string
		bm   *benchModel
		seqs int
	}{{"stories110m-f32", stepBenchModels[0].bm, 64}, {"tinyllama-1.1b-f32", stepBenchModels[1].bm, 16}, {"tinyllama-1.1b-q8_0", stepBenchModels[2].bm, 16}} {
		b.Run(fmt.Sprintf("%s/tokens=%d", c.name, c.seqs*prompt), func(b *testing.B) {
			m := c.bm.get(b)
			pool := tensor.NewPool(2)
			defer pool.Close()
			const bs = 16
			per := prompt / bs
			kv := NewKVCache(m.Config, c.seqs*per, bs)
			batch := &Batch{Tokens: randTokens(c.seqs*prompt, m.Config.VocabSize, 5)}
			for s := range c.seqs {
				bt := make([]int32, per)
				for i := range bt {
					bt[i] = int32(s*per + i)
				}
				batch.Seqs = append(batch.Seqs, Seq{NumTokens: prompt, BlockTable: bt, NeedLogits: true})
			}
			ws := m.NewWorkspace(len(batch.Tokens))
			logits := make([]float32, c.seqs*m.Config.VocabSize)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				if err := m.Forward(ws, pool, batch, kv, logits); err != nil {
					b.Fatal(err)
				}
			}
			reportSpeed(b, len(batch.Tokens)*b.N, cputime.Process()-cpu0)
		})
	}
}
