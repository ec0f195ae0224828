package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulF32BatchInvariant checks batch invariance bit for bit: at every
// kernel level, out[i][r] of a batched F32 MatMul equals the n = 1 result
// for the same x row, whatever n (GEMM tiles, their leftover rows, the
// matvec path), the thread count and row split, and the W row's position
// in a tile (W shifted by a few rows). MatMulStrided and DotStrided must
// agree with it too. It runs with the default cache blocking of the GEMM
// and with blocks small enough to cut these shapes into many column and
// row blocks.
func TestMatMulF32BatchInvariant(t *testing.T) {
	for _, b := range []struct {
		name       string
		kc, mc, xb int
	}{
		{"default", gemmKC, gemmMC, gemmXBytes},
		{"kc=32,mc=4", 32, 64, 1},
		{"kc=48,mc=8", 48, 8, 1 << 30},
	} {
		t.Run(b.name, func(t *testing.T) {
			kc, mc, xb := gemmKC, gemmMC, gemmXBytes
			gemmKC, gemmMC, gemmXBytes = b.kc, b.mc, b.xb
			defer func() { gemmKC, gemmMC, gemmXBytes = kc, mc, xb }()
			testMatMulF32BatchInvariant(t)
		})
	}
}

func testMatMulF32BatchInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	ns := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 33, 64}
	pools := []struct {
		name string
		p    *Pool
	}{{"t=1", NewPool(1)}, {"t=2", NewPool(2)}}
	defer func() {
		for _, p := range pools {
			p.p.Close()
		}
	}()
	shapes := []struct{ rows, cols int }{{29, 1}, {29, 7}, {31, 16}, {29, 17}, {37, 100}, {29, 288}, {53, 768}, {5, 33}}
	eachImpl(t, func(t *testing.T) {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%dx%d", s.rows, s.cols), func(t *testing.T) {
				w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: randVec(rng, s.rows*s.cols)}
				maxN := ns[len(ns)-1]
				x := randVec(rng, maxN*s.cols)
				// ref[i] is x row i alone (n = 1, on the caller).
				ref := make([]float32, maxN*s.rows)
				for i := 0; i < maxN; i++ {
					(*Pool)(nil).MatMul(ref[i*s.rows:(i+1)*s.rows], x[i*s.cols:(i+1)*s.cols], 1, w)
				}
				same := func(t *testing.T, what string, got []float32, i, r0 int) {
					t.Helper()
					for r, v := range got {
						if want := ref[i*s.rows+r0+r]; math.Float32bits(v) != math.Float32bits(want) {
							t.Fatalf("%s: out[%d][%d] = %v (%#x), alone %v (%#x)", what, i, r0+r, v, math.Float32bits(v), want, math.Float32bits(want))
						}
					}
				}
				for _, pl := range pools {
					for _, n := range ns {
						out := make([]float32, n*s.rows)
						pl.p.MatMul(out, x, n, w)
						for i := 0; i < n; i++ {
							same(t, fmt.Sprintf("%s n=%d", pl.name, n), out[i*s.rows:(i+1)*s.rows], i, 0)
						}
					}
				}
				// The same W rows at other positions within the tiles.
				for _, sh := range []int{1, 3, 5} {
					if sh >= s.rows {
						continue
					}
					ws := &Mat{Rows: s.rows - sh, Cols: s.cols, Type: F32, F32: w.F32[sh*s.cols:]}
					for _, n := range []int{1, 5, 17} {
						out := make([]float32, n*ws.Rows)
						pools[1].p.MatMul(out, x, n, ws)
						for i := 0; i < n; i++ {
							same(t, fmt.Sprintf("W from row %d, n=%d", sh, n), out[i*ws.Rows:(i+1)*ws.Rows], i, sh)
						}
					}
				}
				// MatMulStrided over all rows; DotStrided (from shortVec
				// columns, below which it is Dot's plain loop) per row.
				out := make([]float32, maxN*s.rows)
				MatMulStrided(out, s.rows, x, s.cols, maxN, w.F32, s.cols, s.rows, s.cols)
				for i := 0; i < maxN; i++ {
					same(t, "MatMulStrided", out[i*s.rows:(i+1)*s.rows], i, 0)
					if s.cols >= shortVec {
						DotStrided(out[:s.rows], x[i*s.cols:(i+1)*s.cols], w.F32, s.cols)
						same(t, "DotStrided", out[:s.rows], i, 0)
					}
				}
			})
		}
	})
}

// TestMatMulQ8_0BatchInvariant: the same bitwise check for Q8_0 weights
// (the 1-row and 4-row VNNI kernels, the portable ones, and the rows a
// panel leaves over).
func TestMatMulQ8_0BatchInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	p := NewPool(2)
	defer p.Close()
	eachImpl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{{29, 32}, {31, 288}, {13, 768}} {
			t.Run(fmt.Sprintf("%dx%d", s.rows, s.cols), func(t *testing.T) {
				w := quantizeMat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
				const maxN = 33
				x := randVec(rng, maxN*s.cols)
				ref := make([]float32, maxN*s.rows)
				for i := 0; i < maxN; i++ {
					(*Pool)(nil).MatMul(ref[i*s.rows:(i+1)*s.rows], x[i*s.cols:(i+1)*s.cols], 1, w)
				}
				for _, n := range []int{2, 3, 4, 5, 7, 8, 9, 17, 33} {
					out := make([]float32, n*s.rows)
					p.MatMul(out, x, n, w)
					for i, v := range out {
						if math.Float32bits(v) != math.Float32bits(ref[i]) {
							t.Fatalf("n=%d: out[%d][%d] = %v, alone %v", n, i/s.rows, i%s.rows, v, ref[i])
						}
					}
				}
			})
		}
	})
}
