package tensor

import (
	"fmt"
	"govllm/internal/cputime"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatMulKCold measures the packed K-format matvec (n=1, a decode
// step's product) with its weights from memory, as in a forward pass: each
// call takes the next of enough copies of a TinyLlama-shaped matrix (5632×2048,
// the FFN's gate and up; 2048×5632, its down) to fill 384 MB, more than
// any L3. GB/s counts the packed weight bytes read per second of wall clock;
// compare it with scripts/stream-read.c's read bandwidth at the same thread
// count.
// Run: go test -run '^$' -bench MatMulKCold ./internal/tensor
func BenchmarkMatMulKCold(b *testing.B) {
	const total = 384 << 20
	rng := rand.New(rand.NewPCG(21, 2))
	for _, typ := range []DType{Q4_K, Q6_K, Q5_K, Q3_K} {
		c := CodecOf(typ)
		for _, s := range []struct{ rows, cols int }{{5632, 2048}, {2048, 5632}} {
			w := &Mat{Rows: s.rows, Cols: s.cols, Type: typ, Q: randBlocks(rng, c, s.rows*s.cols/256)}
			if PackBlocks(w); w.P == nil {
				b.Skipf("level %s has no packed %s kernel", Level(), c.Name)
			}
			ws := coldCopies(w, total)
			x := randVec(rng, s.cols)
			out := make([]float32, s.rows)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%dx%d/t=%d", c.Name, s.rows, s.cols, threads), func(b *testing.B) {
					p := NewPool(threads)
					defer p.Close()
					i := 0
					cpu0 := cputime.Process()
					for b.Loop() {
						p.MatMul(out, x, 1, ws[i])
						i = (i + 1) % len(ws)
					}
					bytes := float64(len(w.P)) * float64(b.N)
					b.ReportMetric(bytes/b.Elapsed().Seconds()/1e9, "GB/s")
					if cpu := cputime.Process() - cpu0; cpu > 0 {
						// Steadier on a shared machine (with t=2 it
						// includes the workers' spinning).
						b.ReportMetric(bytes/cpu.Seconds()/1e9, "GB/cpu-s")
					}
				})
			}
		}
	}
}

// coldCopies returns the packed matrix w and copies of it, total bytes of
// packed weights in all: more than any L3, so that taking each in turn
// reads them from memory.
func coldCopies(w *Mat, total int) []*Mat {
	ws := []*Mat{w}
	for k := len(w.P); k+len(w.P) <= total; k += len(w.P) {
		cp := *w
		cp.P = alignedBytes(len(w.P), 64)
		copy(cp.P, w.P)
		ws = append(ws, &cp)
	}
	return ws
}
