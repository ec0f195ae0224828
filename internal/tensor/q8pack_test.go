package tensor

import (
	"bytes"
	"fmt"
	"govllm/internal/cputime"
	"math"
	"math/rand/v2"
	"testing"
)

// packedMat returns the packed form of a Q8_0 matrix (whatever the level in
// use would do in PackQ8).
func packedMat(w *Mat) *Mat {
	return &Mat{Rows: w.Rows, Cols: w.Cols, Type: Q8_0, P: packQ8(w.Q, w.Rows, w.Cols)}
}

// TestPackRoundTrip: unpacking a packed Q8_0 or Q4_0 matrix gives back its
// GGML blocks, and the packed size is the documented one.
func TestPackRoundTrip(t *testing.T) {
	for _, f := range []struct {
		name     string
		seed     uint64
		quantize func(rows, cols int, src []float32) *Mat
		pack     func(q []byte, rows, cols int) []byte
		unpack   func(p []byte, rows, cols int) []byte
		size     func(rows, cols int) int
	}{
		{"q8_0", 31, quantizeMat, packQ8, unpackQ8, q8PackedBytes},
		{"q4_0", 55, quantizeQ4Mat, packQ4, unpackQ4, q4PackedBytes},
	} {
		rng := rand.New(rand.NewPCG(f.seed, f.seed+1))
		for _, s := range []struct{ rows, cols int }{{1, 32}, {16, 64}, {17, 96}, {45, 256}} {
			w := f.quantize(s.rows, s.cols, randVec(rng, s.rows*s.cols))
			p := f.pack(w.Q, s.rows, s.cols)
			if len(p) != f.size(s.rows, s.cols) {
				t.Fatalf("%s %dx%d: packed %d bytes, want %d", f.name, s.rows, s.cols, len(p), f.size(s.rows, s.cols))
			}
			if !bytes.Equal(f.unpack(p, s.rows, s.cols), w.Q) {
				t.Fatalf("%s %dx%d: unpack(pack(q)) != q", f.name, s.rows, s.cols)
			}
		}
	}
}

// TestMatMulQ8Packed checks packed MatMul against the float64 product of
// the dequantized operands (as TestMatMulQ8_0 does for GGML blocks), with
// rows not a multiple of 16, activation counts around the tile sizes and
// weights of -128 (which GGML never writes but a file may hold).
func TestMatMulQ8Packed(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	pools := map[string]*Pool{"nil": nil, "2": NewPool(2)}
	defer pools["2"].Close()
	eachImpl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{{1, 32}, {3, 64}, {16, 96}, {33, 288}, {64, 64}, {71, 256}, {130, 512}, {5, 2048}} {
			for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 17} {
				wf := randVec(rng, s.rows*s.cols)
				wq := quantizeMat(s.rows, s.cols, wf)
				for k := 0; k < len(wq.Q); k += 7 * Q8BlockBytes {
					wq.Q[k+2+k%Q8BlockSize] = 0x80 // -128
				}
				w := packedMat(wq)
				wd := make([]float32, len(wf))
				DequantizeQ8_0(wd, wq.Q)
				x := randVec(rng, n*s.cols)
				xq := make([]byte, n*s.cols/32*34)
				QuantizeQ8_0(xq, x)
				xd := make([]float32, len(x))
				DequantizeQ8_0(xd, xq)
				exact := refMatMul64(xd, wd, n, s.rows, s.cols)
				for name, p := range pools {
					t.Run(fmt.Sprintf("%dx%d/n=%d/pool=%s", s.rows, s.cols, n, name), func(t *testing.T) {
						out := make([]float32, n*s.rows+5)
						for i := range out {
							out[i] = 12345
						}
						p.MatMul(out, x, n, w)
						checkClose(t, out[:n*s.rows], exact, s.cols, 1)
						for i, v := range out[n*s.rows:] {
							if v != 12345 {
								t.Fatalf("wrote past the outputs: out[%d] = %v", n*s.rows+i, v)
							}
						}
					})
				}
			}
		}
	})
}

// TestMatMulQ8PackedBatchInvariant: an output's bits do not depend on n,
// the tile (two groups × four rows, or the one-row kernel), the thread
// split or the rows a panel leaves over.
func TestMatMulQ8PackedBatchInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	p := NewPool(2)
	defer p.Close()
	eachImpl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{{29, 32}, {31, 288}, {100, 768}, {200, 256}} {
			t.Run(fmt.Sprintf("%dx%d", s.rows, s.cols), func(t *testing.T) {
				w := packedMat(quantizeMat(s.rows, s.cols, randVec(rng, s.rows*s.cols)))
				const maxN = 33
				x := randVec(rng, maxN*s.cols)
				ref := make([]float32, maxN*s.rows)
				for i := 0; i < maxN; i++ {
					(*Pool)(nil).MatMul(ref[i*s.rows:(i+1)*s.rows], x[i*s.cols:(i+1)*s.cols], 1, w)
				}
				for _, n := range []int{2, 3, 4, 5, 7, 8, 9, 17, 33} {
					for _, pool := range []*Pool{nil, p} {
						out := make([]float32, n*s.rows)
						pool.MatMul(out, x, n, w)
						for i, v := range out {
							if math.Float32bits(v) != math.Float32bits(ref[i]) {
								t.Fatalf("n=%d: out[%d][%d] = %v, alone %v", n, i/s.rows, i%s.rows, v, ref[i])
							}
						}
					}
				}
			})
		}
	})
}

// TestPackQ8: PackQ8 packs Q8_0 matrices (except on levels that keep GGML
// blocks) and leaves F32 ones alone.
func TestPackQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	eachImpl(t, func(t *testing.T) {
		w := quantizeMat(20, 64, randVec(rng, 20*64))
		q := w.Q
		PackQ8(w)
		if impl.q8p == nil {
			if w.P != nil || w.Q == nil {
				t.Fatalf("level %s packed", impl.name)
			}
			return
		}
		if w.Q != nil || !bytes.Equal(unpackQ8(w.P, 20, 64), q) {
			t.Fatalf("PackQ8 did not pack")
		}
		f := &Mat{Rows: 1, Cols: 32, Type: F32, F32: make([]float32, 32)}
		PackQ8(f)
		if f.P != nil {
			t.Fatalf("PackQ8 packed an F32 matrix")
		}
	})
}

// BenchmarkMatMulQ8Packed compares, per shape and n, MatMul on the GGML
// blocks (layout=ggml) and on the packed layout (layout=packed) at the best
// level, interleaved. Reports GFLOP/s and GFLOP/cpu-s like BenchmarkMatMul,
// and the weight bytes read per CPU-second.
// Run: go test -run '^$' -bench MatMulQ8Packed ./internal/tensor
func BenchmarkMatMulQ8Packed(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchShapes {
		wg := quantizeMat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
		wp := packedMat(wg)
		for _, n := range []int{1, 4, 16, 64, 512} {
			x := randVec(rng, n*s.cols)
			out := make([]float32, n*s.rows)
			flops := 2 * float64(n) * float64(s.rows) * float64(s.cols)
			for _, threads := range []int{1, 2} {
				for _, l := range []struct {
					name string
					w    *Mat
				}{{"ggml", wg}, {"packed", wp}} {
					b.Run(fmt.Sprintf("%s/n=%d/t=%d/%s", s.name, n, threads, l.name), func(b *testing.B) {
						p := NewPool(threads)
						defer p.Close()
						p.MatMul(out, x, n, l.w)
						b.ResetTimer()
						cpu0 := cputime.Process()
						for b.Loop() {
							p.MatMul(out, x, n, l.w)
						}
						b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
						nbytes := float64(len(l.w.Q)+len(l.w.P)) * float64(b.N)
						if cpu := cputime.Process() - cpu0; cpu > 0 {
							b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
							b.ReportMetric(nbytes/cpu.Seconds()/1e9, "GB/cpu-s") // weights read
						}
					})
				}
			}
		}
	}
}

// TestQ8pScales checks each level's scale pairs (q8pScales or the
// level's q8ps) against sums taken value by value, with the extreme blocks
// of all −128 and all 127.
func TestQ8pScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	const nb = 50
	xq := make([]int8, nb*Q8BlockSize)
	for i := range xq {
		xq[i] = int8(rng.IntN(256) - 128)
	}
	for i := 0; i < Q8BlockSize; i++ { // extremes
		xq[i], xq[Q8BlockSize+i] = -128, 127
	}
	xd := randVec(rng, nb)
	eachImpl(t, func(t *testing.T) {
		f := impl.q8ps
		if f == nil {
			f = q8pScales
		}
		for _, n := range []int{1, 2, nb} {
			xs := make([]uint32, 2*n+1)
			f(xs[:2*n], xq[:n*Q8BlockSize], xd[:n])
			if xs[2*n] != 0 {
				t.Fatalf("nb=%d: wrote past the pairs", n)
			}
			for b := 0; b < n; b++ {
				var s int32
				for _, v := range xq[b*Q8BlockSize : (b+1)*Q8BlockSize] {
					s += int32(v)
				}
				if xs[2*b] != math.Float32bits(xd[b]) || int32(xs[2*b+1]) != -128*s {
					t.Fatalf("nb=%d block %d: got (%#x, %d), want (%#x, %d)", n, b, xs[2*b], int32(xs[2*b+1]), math.Float32bits(xd[b]), -128*s)
				}
			}
		}
	})
}

// BenchmarkPackQ8 measures the load-time repacking (GB of GGML blocks per
// second and per CPU-second).
func BenchmarkPackQ8(b *testing.B) {
	rng := rand.New(rand.NewPCG(41, 42))
	w := quantizeMat(5632, 2048, randVec(rng, 5632*2048))
	cpu0 := cputime.Process()
	for b.Loop() {
		packQ8(w.Q, w.Rows, w.Cols)
	}
	b.ReportMetric(float64(len(w.Q))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(w.Q))*float64(b.N)/cpu.Seconds()/1e9, "GB/cpu-s")
	}
}

// BenchmarkMatMulQ8PackedDRAM is BenchmarkMatMulQ8Packed for 5632×2048
// (one thread) with the weights read from DRAM, as in a model's forward
// pass: each call takes the next of 32 copies of the matrix (368 MB per
// layout, more than the L3). n=512 is a prefill chunk.
func BenchmarkMatMulQ8PackedDRAM(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, cols, copies = 5632, 2048, 32
	wg := quantizeMat(rows, cols, randVec(rng, rows*cols))
	layouts := []struct {
		name string
		ws   []*Mat
	}{{"ggml", nil}, {"packed", nil}}
	for c := 0; c < copies; c++ {
		g := &Mat{Rows: rows, Cols: cols, Type: Q8_0, Q: append([]byte(nil), wg.Q...)}
		layouts[0].ws = append(layouts[0].ws, g)
		layouts[1].ws = append(layouts[1].ws, packedMat(g))
	}
	for _, n := range []int{1, 4, 16, 64, 512} {
		x := randVec(rng, n*cols)
		out := make([]float32, n*rows)
		flops := 2 * float64(n) * float64(rows) * float64(cols)
		for _, l := range layouts {
			b.Run(fmt.Sprintf("n=%d/%s", n, l.name), func(b *testing.B) {
				p := NewPool(1)
				defer p.Close()
				cpu0 := cputime.Process()
				i := 0
				for b.Loop() {
					p.MatMul(out, x, n, l.ws[i%copies])
					i++
				}
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					b.ReportMetric(float64(len(wg.Q))*float64(b.N)/cpu.Seconds()/1e9, "GB/cpu-s")
				}
			})
		}
	}
}

// TestMatMulQ8PackedAllocs: a packed MatMul allocates nothing once the
// pool's scratch has grown.
func TestMatMulQ8PackedAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	rows, cols := 300, 256
	w := packedMat(quantizeMat(rows, cols, randVec(rng, rows*cols)))
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		for _, n := range []int{1, 5} {
			x := randVec(rng, n*cols)
			out := make([]float32, n*rows)
			p.MatMul(out, x, n, w)
			if a := testing.AllocsPerRun(20, func() { p.MatMul(out, x, n, w) }); a != 0 {
				t.Errorf("threads=%d n=%d: %v allocations per MatMul", threads, n, a)
			}
		}
		p.Close()
	}
}
