package tensor

import (
	"fmt"
	"govllm/internal/cputime"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkGemmKernel runs the GEMM micro-kernel alone on one x tile and one
// W panel of k columns, the same data every call: its ceiling when both
// operands sit in L1 (small k) or L2 (large k).
func BenchmarkGemmKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, k := range []int{256, 512, 768, 1024, 2048, 5632} {
		kn := impl
		x := randVec(rng, kn.mr*k)
		w := randVec(rng, kn.nr*k)
		out := make([]float32, kn.mr*kn.nr)
		if kn.gemmBlk != nil {
			acc := make([]float32, kn.mr*kn.nr*16)
			xp := make([]float32, kn.mr*((k+15)/16)*16)
			packX(xp, x, k, 1, k)
			for _, fl := range []int{gemmFinal, gemmLoad} {
				b.Run(fmt.Sprintf("%s/blk/flags=%d/k=%d", kn.name, fl, k), func(b *testing.B) {
					cpu0 := cputime.Process()
					for b.Loop() {
						kn.gemmBlk(out, kn.nr, xp, w, k, k, acc, fl, w, 1)
					}
					flops := 2 * float64(kn.mr*kn.nr*k) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := cputime.Process() - cpu0; cpu > 0 {
						b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
		if kn.gemm == nil {
			continue
		}
		b.Run(fmt.Sprintf("%s/k=%d", kn.name, k), func(b *testing.B) {
			cpu0 := cputime.Process()
			for b.Loop() {
				kn.gemm(out, kn.nr, x, k, w, k, k)
			}
			flops := 2 * float64(kn.mr*kn.nr*k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
			}
		})
	}
}

// BenchmarkGemmCeiling puts the full F32 MatMul (one thread) next to its
// micro-kernel's ceiling, measured in the same iterations: the kernel over
// 32 packed x tiles (in L2) and one W block (in L1) of the plan's column
// block width, reduced at the end of each tile (gemmFinal). "GFLOP/cpu-s"
// is the MatMul's, "kernel-GFLOP/cpu-s" the kernel's and "%kernel" their
// ratio: what the blocking, packing, W from memory and the per-call work
// lose to the kernel itself. Shapes: stories110M's 768-wide Wo, W13 and
// W2 (768×2048), TinyLlama's Wo, W13 halves and W2 (2048×5632).
// Run: go test -run '^$' -bench GemmCeiling ./internal/tensor
func BenchmarkGemmCeiling(b *testing.B) {
	kn := impl
	if kn.gemmBlk == nil {
		b.Skip("no gemmBlk kernel at level", kn.name)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	for _, s := range []struct{ rows, cols int }{{768, 768}, {4096, 768}, {768, 2048}, {2048, 2048}, {5632, 2048}, {2048, 5632}} {
		w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: randVec(rng, s.rows*s.cols)}
		for _, n := range []int{16, 128} {
			b.Run(fmt.Sprintf("%dx%d/n=%d", s.rows, s.cols, n), func(b *testing.B) {
				x := randVec(rng, n*s.cols)
				out := make([]float32, n*s.rows)
				p := NewPool(1)
				defer p.Close()
				kc := min(kn.gemmPlan(n, s.cols).kc, s.cols)
				const tiles = 32
				xp := make([]float32, tiles*((kc+15)/16)*64)
				packX(xp, randVec(rng, tiles*4*kc), kc, tiles, kc)
				wk := randVec(rng, kn.nr*kc)
				ko := make([]float32, tiles*4*kn.nr)
				benchCeiling(b, 2*float64(n*s.rows*s.cols), 2*float64(tiles*4*kn.nr*kc),
					func() { p.MatMul(out, x, n, w) },
					func() { kn.gemmBlk(ko, kn.nr, xp, wk, kc, kc, nil, gemmFinal, wk, tiles) })
			})
		}
	}
}

// benchCeiling times matmul (flops each) and, as many times as makes up
// half its work, kernel (kflops each) on data already in cache, in each
// iteration, and reports both speeds and their ratio (%kernel): the share
// of the kernel's ceiling the blocking and memory traffic leave.
func benchCeiling(b *testing.B, flops, kflops float64, matmul, kernel func()) {
	reps := max(1, int(flops/kflops/2))
	matmul()
	var mm, kt time.Duration
	for b.Loop() {
		c0 := cputime.Process()
		matmul()
		c1 := cputime.Process()
		for range reps {
			kernel()
		}
		mm, kt = mm+c1-c0, kt+cputime.Process()-c1
	}
	if mm > 0 && kt > 0 {
		g := flops * float64(b.N) / mm.Seconds() / 1e9
		kg := kflops * float64(reps*b.N) / kt.Seconds() / 1e9
		b.ReportMetric(g, "GFLOP/cpu-s")
		b.ReportMetric(kg, "kernel-GFLOP/cpu-s")
		b.ReportMetric(100*g/kg, "%kernel")
	}
}
