package tensor

import (
	"fmt"
	"govllm/internal/cputime"
	"math/rand/v2"
	"testing"
)

// Shapes of stories110M (dim 768, hidden 2048, vocab 32000) and TinyLlama
// (dim 2048, hidden 5632), as Rows×Cols of W.
var benchShapes = []struct {
	name       string
	rows, cols int
}{
	{"768x768", 768, 768},
	{"2048x768", 2048, 768},
	{"32000x768", 32000, 768},
	{"2048x2048", 2048, 2048},
	{"5632x2048", 5632, 2048},
}

// benchNs are the activation rows BenchmarkMatMul runs: decode (1), a few
// batched decode streams (4, 8) and prefill chunks (16, 64, 128).
var benchNs = []int{1, 4, 8, 16, 64, 128}

// BenchmarkMatMul reports GFLOP/s (2·n·Rows·Cols per call, wall clock) and
// GFLOP/cpu-s (per CPU-second of the process) of each kernel level and the
// scalar reference (matMulRef: a plain Go dot loop per output) as baseline.
// Run: go test -run '^$' -bench MatMul ./internal/tensor
func BenchmarkMatMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchShapes {
		wf := randVec(rng, s.rows*s.cols)
		mats := map[DType]*Mat{
			F32:  {Rows: s.rows, Cols: s.cols, Type: F32, F32: wf},
			Q8_0: quantizeMat(s.rows, s.cols, wf),
		}
		for _, dt := range []DType{F32, Q8_0} {
			w := mats[dt]
			for _, n := range benchNs {
				if n > 1 && s.rows == 32000 && testing.Short() {
					continue
				}
				x := randVec(rng, n*s.cols)
				out := make([]float32, n*s.rows)
				flops := 2 * float64(n) * float64(s.rows) * float64(s.cols)
				run := func(b *testing.B, f func()) {
					f()
					b.ResetTimer()
					cpu0 := cputime.Process()
					for b.Loop() {
						f()
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := cputime.Process() - cpu0; cpu > 0 {
						// Steadier on a shared machine; with t=2 it includes
						// the workers' spinning.
						b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					}
				}
				for _, k := range allImpls() {
					if k == goKernels && n > 1 && s.rows*s.cols > 2048*768 {
						continue // minutes per run; the n=1 figures show its speed
					}
					for _, threads := range []int{1, 2} {
						b.Run(fmt.Sprintf("%s/%s/n=%d/%s/t=%d", dtName(dt), s.name, n, k.name, threads), func(b *testing.B) {
							saved := impl
							impl = k
							defer func() { impl = saved }()
							p := NewPool(threads)
							defer p.Close()
							run(b, func() { p.MatMul(out, x, n, w) })
						})
					}
				}
				if n == 1 || s.rows*s.cols <= 2048*768 {
					b.Run(fmt.Sprintf("%s/%s/n=%d/scalar/t=1", dtName(dt), s.name, n), func(b *testing.B) {
						run(b, func() { matMulRef(out, x, n, w) })
					})
				}
			}
		}
	}
}

func dtName(d DType) string {
	if d == Q8_0 {
		return "Q8_0"
	}
	return "F32"
}

// BenchmarkDot compares the kernels on attention-sized vectors.
func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{8, 16, 32, 64, 128} {
		x, y := randVec(rng, n), randVec(rng, n)
		for _, k := range allImpls() {
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				var s float32
				for b.Loop() {
					s += dotK(k, x, y)
				}
				b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				_ = s
			})
		}
	}
}

// BenchmarkAxpy compares Axpy levels on attention-sized vectors.
func BenchmarkAxpy(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{8, 16, 32, 64, 128} {
		x, y := randVec(rng, n), randVec(rng, n)
		for _, k := range allImpls() {
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				saved := impl
				impl = k
				defer func() { impl = saved }()
				for b.Loop() {
					Axpy(y, 1e-3, x)
				}
				b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkParallelFor is the pool's per-call synchronisation cost.
func BenchmarkParallelFor(b *testing.B) {
	p := NewPool(2)
	defer p.Close()
	fn := func(lo, hi int) {}
	for b.Loop() {
		p.ParallelFor(2, fn)
	}
}

// BenchmarkSoftmax: attention-row lengths (positions attended).
func BenchmarkSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{16, 128, 1024} {
		src := randVec(rng, n)
		x := make([]float32, n)
		for _, k := range allImpls() {
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				saved := impl
				impl = k
				defer func() { impl = saved }()
				for b.Loop() {
					copy(x, src)
					Softmax(x)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		}
	}
}

// BenchmarkSwiGLU: MLP hidden sizes of stories110M and TinyLlama.
func BenchmarkSwiGLU(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{2048, 5632} {
		g, u := randVec(rng, n), randVec(rng, n)
		x := make([]float32, n)
		for _, k := range allImpls() {
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				saved := impl
				impl = k
				defer func() { impl = saved }()
				for b.Loop() {
					copy(x, g)
					SwiGLU(x, u)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		}
	}
}

// BenchmarkAttentionRow: one head's scores and weighted value sum over np
// cached positions (head_dim 64, slots 4 heads apart), with the strided
// kernels and with one Dot/Axpy call per position.
func BenchmarkAttentionRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	const hd, stride = 64, 256
	for _, np := range []int{16, 256} {
		kv := randVec(rng, np*stride)
		q := randVec(rng, hd)
		sc := make([]float32, np)
		y := make([]float32, hd)
		b.Run(fmt.Sprintf("np=%d/strided", np), func(b *testing.B) {
			for b.Loop() {
				DotStrided(sc, q, kv, stride)
				AxpyStrided(y, sc, kv, stride)
			}
		})
		b.Run(fmt.Sprintf("np=%d/per-position", np), func(b *testing.B) {
			for b.Loop() {
				for p := range sc {
					sc[p] = Dot(q, kv[p*stride:p*stride+hd])
				}
				for p, a := range sc {
					Axpy(y, a, kv[p*stride:p*stride+hd])
				}
			}
		})
	}
}

// BenchmarkAttentionScores: 64 queries of one head (head_dim 64) against
// 256 cached positions, as one MatMulStrided or one DotStrided per query.
func BenchmarkAttentionScores(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	const hd, stride, nq, np = 64, 256, 64, 256
	kv := randVec(rng, np*stride)
	q := randVec(rng, nq*hd)
	sc := make([]float32, nq*np)
	flops := 2.0 * hd * nq * np
	b.Run("MatMulStrided", func(b *testing.B) {
		for b.Loop() {
			MatMulStrided(sc, np, q, hd, nq, kv, stride, np, hd)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("DotStrided", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < nq; i++ {
				DotStrided(sc[i*np:(i+1)*np], q[i*hd:(i+1)*hd], kv, stride)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// BenchmarkScoresTile: an attention tile's scores against one KV-cache
// block (8 queries × 16 slots, 768 floats apart) as one
// MatMulStrided (the scores kernel where the level has one), through the
// GEMM path it replaces, and as one DotStrided per query.
func BenchmarkScoresTile(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	const nq, np = 8, 16
	for _, hd := range []int{16, 32, 48, 64, 128} {
		stride := 12 * 64
		kv := randVec(rng, np*stride)
		q := randVec(rng, nq*stride)
		sc := make([]float32, nq*np)
		flops := 2.0 * float64(hd*nq*np)
		report := func(b *testing.B) {
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("hd=%d/MatMulStrided", hd), func(b *testing.B) {
			for b.Loop() {
				MatMulStrided(sc, np, q, stride, nq, kv, stride, np, hd)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("hd=%d/gemm", hd), func(b *testing.B) {
			g := gemmArgs{out: sc, ldo: np, x: q, ldx: stride, n: nq, w: kv, ldw: stride, k: hd}
			for b.Loop() {
				f32Rows(impl, &g, 0, np)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("hd=%d/DotStrided", hd), func(b *testing.B) {
			for b.Loop() {
				for i := range nq {
					DotStrided(sc[i*np:(i+1)*np], q[i*stride:i*stride+hd], kv, stride)
				}
			}
			report(b)
		})
	}
}

// BenchmarkAttentionTile: one attention tile's scores and weighted value
// sums (8 queries, head_dim 64) over 1024 cached positions in 64 blocks
// of 16 slots, 12 heads apart (a stories110m layer's KV cache: the head's
// 256 KB stay in L2, not in L1), block by block (MatMulStrided,
// AxpyStrided4) and with the block-table calls (ScoresBlocks,
// AxpyBlocks).
func BenchmarkAttentionTile(b *testing.B) {
	rng := rand.New(rand.NewPCG(10, 10))
	const nq, hd, bs, nb, stride = 8, 64, 16, 64, 12 * 64
	const np = nb * bs
	kv := randVec(rng, np*stride)
	q := randVec(rng, nq*stride)
	sc := make([]float32, nq*np)
	for i := range sc {
		sc[i] = rng.Float32() / np
	}
	y := make([]float32, nq*hd)
	bt := make([]int32, nb)
	for i := range bt {
		bt[i] = int32((i * 37) % nb)
	}
	const blk = bs * stride
	b.Run("scores/blocks", func(b *testing.B) {
		for b.Loop() {
			for p := 0; p < np; p += bs {
				MatMulStrided(sc[p:], np, q, stride, nq, kv[int(bt[p/bs])*blk:], stride, bs, hd)
			}
		}
	})
	b.Run("scores/ScoresBlocks", func(b *testing.B) {
		for b.Loop() {
			ScoresBlocks(sc, np, q, stride, nq, kv, bt, blk, stride, bs, np, hd, 0.125)
		}
	})
	b.Run("values/blocks", func(b *testing.B) {
		for b.Loop() {
			for p := 0; p < np; p += bs {
				for t := 0; t < nq; t += 4 {
					AxpyStrided4(y[t*hd:], hd, sc[t*np+p:], np, kv[int(bt[p/bs])*blk:], stride, bs, hd)
				}
			}
		}
	})
	b.Run("values/AxpyBlocks", func(b *testing.B) {
		for b.Loop() {
			AxpyBlocks(y, hd, sc, np, nq, kv, bt, blk, stride, bs, hd)
		}
	})
}

// BenchmarkMatMulColdW is BenchmarkMatMul's F32 GEMM (one thread) with W
// from memory, as in a forward pass, where every layer's weights are read
// once per step: each call takes the next of enough copies of W to fill
// 320 MB (more than this machine's L3).
// Run: go test -run '^$' -bench MatMulColdW ./internal/tensor
func BenchmarkMatMulColdW(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	const total = 320 << 20 / 4 // floats
	buf := randVec(rng, total)
	for _, s := range []struct{ rows, cols int }{{768, 768}, {4096, 768}, {768, 2048}, {2048, 2048}, {11264, 2048}, {2048, 5632}} {
		var ws []*Mat
		for o := 0; o+s.rows*s.cols <= total; o += s.rows * s.cols {
			ws = append(ws, &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: buf[o : o+s.rows*s.cols]})
		}
		for _, n := range []int{16, 128} {
			b.Run(fmt.Sprintf("%dx%d/n=%d", s.rows, s.cols, n), func(b *testing.B) {
				x := randVec(rng, n*s.cols)
				out := make([]float32, n*s.rows)
				p := NewPool(1)
				defer p.Close()
				i := 0
				cpu0 := cputime.Process()
				for b.Loop() {
					p.MatMul(out, x, n, ws[i])
					i = (i + 1) % len(ws)
				}
				flops := 2 * float64(n*s.rows*s.cols) * float64(b.N)
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
				}
			})
		}
	}
}

// BenchmarkScoresBlocks: ScoresBlocks for an attention tile's 8 queries
// (or a GQA group of 16 heads) against 1024 cached positions (head_dim
// 64, 12 heads apart) in blocks of 8, 16 and 32 slots.
func BenchmarkScoresBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 11))
	const hd, np, stride = 64, 1024, 12 * 64
	kv := randVec(rng, np*stride)
	for _, n := range []int{8, 16} {
		q := randVec(rng, n*hd)
		sc := make([]float32, n*np)
		for _, bs := range []int{8, 16, 32} {
			nb := np / bs
			bt := make([]int32, nb)
			for i := range bt {
				bt[i] = int32((i * 37) % nb)
			}
			b.Run(fmt.Sprintf("n=%d/bs=%d", n, bs), func(b *testing.B) {
				flops := 2 * float64(n*np*hd)
				cpu0 := cputime.Process()
				for b.Loop() {
					ScoresBlocks(sc, np, q, hd, n, kv, bt, bs*stride, stride, bs, np, hd, 0.125)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
				}
			})
		}
	}
}
