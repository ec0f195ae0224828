package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
					cpu0 := cpuTime()
					for b.Loop() {
						kn.gemmBlk(out, kn.nr, xp, w, k, k, acc, fl, w, 1)
					}
					flops := 2 * float64(kn.mr*kn.nr*k) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := cpuTime() - cpu0; cpu > 0 {
						b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
		b.Run(fmt.Sprintf("%s/k=%d", kn.name, k), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				kn.gemm(out, kn.nr, x, k, w, k, k)
			}
			flops := 2 * float64(kn.mr*kn.nr*k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
			}
		})
	}
}
