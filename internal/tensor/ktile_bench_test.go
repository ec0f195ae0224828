package tensor

import (
	"fmt"
	"govllm/internal/cputime"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatMulKPrefill measures the packed K-format products of a
// prompt's n rows (one thread) on the stories110M shapes: 768×768 (the
// attention), 2048×768 (FFN gate and up), 768×2048 (FFN down).
// GFLOP/cpu-s counts 2·n·rows·cols.
// Run: go test -run '^$' -bench MatMulKPrefill ./internal/tensor
func BenchmarkMatMulKPrefill(b *testing.B) {
	rng := rand.New(rand.NewPCG(31, 4))
	for _, typ := range []DType{Q4_K, Q6_K, Q5_K, Q3_K} {
		c := CodecOf(typ)
		for _, s := range []struct{ rows, cols int }{{768, 768}, {2048, 768}, {768, 2048}} {
			w := &Mat{Rows: s.rows, Cols: s.cols, Type: typ, Q: randBlocks(rng, c, s.rows*s.cols/256)}
			PackBlocks(w)
			for _, n := range []int{32, 128} {
				x := randVec(rng, n*s.cols)
				out := make([]float32, n*s.rows)
				b.Run(fmt.Sprintf("%s/%dx%d/n=%d", c.Name, s.rows, s.cols, n), func(b *testing.B) {
					p := NewPool(1)
					defer p.Close()
					cpu0 := cputime.Process()
					for b.Loop() {
						p.MatMul(out, x, n, w)
					}
					if cpu := cputime.Process() - cpu0; cpu > 0 {
						b.ReportMetric(2*float64(n*s.rows*s.cols)*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}

// BenchmarkMatMulKColdRows measures the packed K-format products of a few
// activation rows (a batch of decodes: n = 1 the one-row kernels, 2–4 a
// tile) with the weights from memory, as BenchmarkMatMulKCold: copies of
// a 5632×2048 matrix filling 384 MB, one thread. GB/cpu-s counts the
// packed weight bytes read once per call.
// Run: go test -run '^$' -bench MatMulKColdRows ./internal/tensor
func BenchmarkMatMulKColdRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(21, 3))
	const rows, cols = 5632, 2048
	for _, typ := range []DType{Q4_K, Q6_K, Q5_K, Q3_K} {
		c := CodecOf(typ)
		w := &Mat{Rows: rows, Cols: cols, Type: typ, Q: randBlocks(rng, c, rows*cols/256)}
		if PackBlocks(w); w.P == nil {
			b.Skipf("level %s has no packed %s kernel", Level(), c.Name)
		}
		ws := coldCopies(w, 384<<20)
		for _, n := range []int{1, 2, 3, 4} {
			x := randVec(rng, n*cols)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%s/n=%d", c.Name, n), func(b *testing.B) {
				p := NewPool(1)
				defer p.Close()
				i := 0
				cpu0 := cputime.Process()
				for b.Loop() {
					p.MatMul(out, x, n, ws[i])
					i = (i + 1) % len(ws)
				}
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(float64(len(w.P))*float64(b.N)/cpu.Seconds()/1e9, "GB/cpu-s")
				}
			})
		}
	}
}
