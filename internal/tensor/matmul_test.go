package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// refMatMul64 is the float64 reference: out[i][r] = Σ_c x[i][c]·w[r][c].
func refMatMul64(x, w []float32, n, rows, cols int) []float64 {
	out := make([]float64, n*rows)
	for i := 0; i < n; i++ {
		for r := 0; r < rows; r++ {
			var s float64
			for c := 0; c < cols; c++ {
				s += float64(x[i*cols+c]) * float64(w[r*cols+c])
			}
			out[i*rows+r] = s
		}
	}
	return out
}

// checkClose compares got with want, allowing float32 rounding over a sum of
// cols products of magnitude ≈ scale.
func checkClose(t *testing.T, got []float32, want []float64, cols int, scale float64) {
	t.Helper()
	tol := 1e-5 * scale * math.Sqrt(float64(cols)) * 8
	for i := range want {
		if e := math.Abs(float64(got[i]) - want[i]); e > tol || math.IsNaN(float64(got[i])) {
			t.Fatalf("out[%d] = %v, want %v (|err| %.3g > tol %.3g)", i, got[i], want[i], e, tol)
		}
	}
}

var matMulShapes = []struct{ rows, cols int }{
	{1, 1}, {3, 5}, {7, 16}, {13, 17}, {33, 64}, {9, 100}, {26, 172}, {41, 257}, {64, 288},
}

func TestMatMulF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pools := map[string]*Pool{"nil": nil, "1": NewPool(1), "2": NewPool(2)}
	defer pools["1"].Close()
	defer pools["2"].Close()
	eachImpl(t, func(t *testing.T) {
		for _, s := range matMulShapes {
			for _, n := range []int{1, 2, 3, 5, 17} {
				w := &Mat{Rows: s.rows, Cols: s.cols, Type: F32, F32: randVec(rng, s.rows*s.cols)}
				x := randVec(rng, n*s.cols)
				want := refMatMul64(x, w.F32, n, s.rows, s.cols)
				for name, p := range pools {
					t.Run(fmt.Sprintf("%dx%d/n=%d/pool=%s", s.rows, s.cols, n, name), func(t *testing.T) {
						out := make([]float32, n*s.rows+1)
						out[n*s.rows] = 42 // sentinel past the end
						p.MatMul(out, x, n, w)
						checkClose(t, out[:n*s.rows], want, s.cols, 1)
						if out[n*s.rows] != 42 {
							t.Fatal("wrote past n×Rows")
						}
					})
				}
			}
		}
	})
}

// TestMatMulF32Parallel uses shapes big enough to cross parMinWork.
func TestMatMulF32Parallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := NewPool(2)
	defer p.Close()
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{1, 5, 17} {
			rows, cols := 203, 352
			w := &Mat{Rows: rows, Cols: cols, Type: F32, F32: randVec(rng, rows*cols)}
			x := randVec(rng, n*cols)
			out := make([]float32, n*rows)
			p.MatMul(out, x, n, w)
			checkClose(t, out, refMatMul64(x, w.F32, n, rows, cols), cols, 1)
		}
	})
}

func quantizeMat(rows, cols int, src []float32) *Mat {
	q := make([]byte, rows*cols/32*34)
	QuantizeQ8_0(q, src)
	return &Mat{Rows: rows, Cols: cols, Type: Q8_0, Q: q}
}

func TestMatMulQ8_0(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pools := map[string]*Pool{"nil": nil, "2": NewPool(2)}
	defer pools["2"].Close()
	eachImpl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{{1, 32}, {3, 64}, {7, 96}, {13, 288}, {41, 256}, {5, 2048}, {130, 512}} {
			for _, n := range []int{1, 2, 3, 5, 17} {
				wf := randVec(rng, s.rows*s.cols)
				w := quantizeMat(s.rows, s.cols, wf)
				wd := make([]float32, len(wf))
				DequantizeQ8_0(wd, w.Q)
				x := randVec(rng, n*s.cols)
				// Exact reference: the same quantization of x, in float64.
				xq := make([]byte, n*s.cols/32*34)
				QuantizeQ8_0(xq, x)
				xd := make([]float32, len(x))
				DequantizeQ8_0(xd, xq)
				exact := refMatMul64(xd, wd, n, s.rows, s.cols)
				loose := refMatMul64(x, wf, n, s.rows, s.cols)
				for name, p := range pools {
					t.Run(fmt.Sprintf("%dx%d/n=%d/pool=%s", s.rows, s.cols, n, name), func(t *testing.T) {
						out := make([]float32, n*s.rows)
						p.MatMul(out, x, n, w)
						checkClose(t, out, exact, s.cols, 1)
						// Against unquantized operands: two 8-bit roundings
						// (≈ 1/127 of each block's max, random signs).
						for i := range loose {
							if e := math.Abs(float64(out[i]) - loose[i]); e > 0.05*math.Sqrt(float64(s.cols)) {
								t.Fatalf("out[%d] = %v, float reference %v", i, out[i], loose[i])
							}
						}
					})
				}
			}
		}
	})
}

func TestDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 128, 129} {
			a, b := randVec(rng, n), randVec(rng, n+3)
			var want float64
			for i := 0; i < n; i++ {
				want += float64(a[i]) * float64(b[i])
			}
			checkClose(t, []float32{Dot(a, b)}, []float64{want}, n, 1)

			y := randVec(rng, n)
			y0 := append([]float32(nil), y...)
			Axpy(y, 0.75, b)
			for i := range y {
				if w := y0[i] + 0.75*b[i]; math.Abs(float64(y[i]-w)) > 1e-6*(1+math.Abs(float64(w))) {
					t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, y[i], w)
				}
			}
		}
	})
}

func TestDotAxpyStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	eachImpl(t, func(t *testing.T) {
		for _, hd := range []int{1, 8, 15, 16, 17, 64, 100, 128} {
			for _, np := range []int{1, 3, 4, 5, 17} {
				stride := 3*hd + 5
				kv := randVec(rng, (np-1)*stride+hd)
				q := randVec(rng, hd)
				out := make([]float32, np)
				DotStrided(out, q, kv, stride)
				want := make([]float64, np)
				for p := range want {
					for c := 0; c < hd; c++ {
						want[p] += float64(q[c]) * float64(kv[p*stride+c])
					}
				}
				checkClose(t, out, want, hd, 1)

				a := randVec(rng, np)
				y := randVec(rng, hd)
				wy := make([]float64, hd)
				for c := range wy {
					wy[c] = float64(y[c])
					for p := 0; p < np; p++ {
						wy[c] += float64(a[p]) * float64(kv[p*stride+c])
					}
				}
				AxpyStrided(y, a, kv, stride)
				checkClose(t, y, wy, np+1, 1)
			}
		}
	})
}

func TestMatMulStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	eachImpl(t, func(t *testing.T) {
		for _, c := range []struct{ n, m, k int }{{1, 1, 1}, {1, 16, 64}, {2, 5, 8}, {4, 6, 64}, {5, 16, 64}, {9, 13, 100}, {17, 16, 128}} {
			ldx, ldw, ldo := c.k+3, 4*c.k+1, c.m+2
			x := randVec(rng, (c.n-1)*ldx+c.k)
			w := randVec(rng, (c.m-1)*ldw+c.k)
			out := make([]float32, (c.n-1)*ldo+c.m)
			for i := range out {
				out[i] = 7 // the gaps between output rows must keep it
			}
			MatMulStrided(out, ldo, x, ldx, c.n, w, ldw, c.m, c.k)
			for i := 0; i < c.n; i++ {
				want := make([]float64, c.m)
				for j := range want {
					for t := 0; t < c.k; t++ {
						want[j] += float64(x[i*ldx+t]) * float64(w[j*ldw+t])
					}
				}
				checkClose(t, out[i*ldo:i*ldo+c.m], want, c.k, 1)
				for j := c.m; j < ldo && i*ldo+j < len(out); j++ {
					if out[i*ldo+j] != 7 {
						t.Fatalf("%+v: wrote out[%d]", c, i*ldo+j)
					}
				}
			}
		}
	})
}

// TestMatMulStridedBits: every score of a small MatMulStrided (an
// attention tile against a KV-cache block: the scores kernel where the
// level has one, the GEMM past its bounds) has the bits DotStrided gives
// its row (for k ≥ shortVec: below, DotStrided runs Dot, and the
// reference is the one-row matvec), at odd strides and offsets, and the gaps between output rows
// are left alone.
func TestMatMulStridedBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	eachImpl(t, func(t *testing.T) {
		for _, k := range []int{1, 7, 15, 16, 17, 31, 32, 48, 63, 64, 65, 96, 128, 144, 200, 256} {
			for n := 1; n <= scoresRows+2; n++ {
				for m := 1; m <= scoresCols+3; m++ {
					ldx, ldw, ldo := k+3, 3*k+5, m+1
					x := randVec(rng, 1+(n-1)*ldx+k)[1:]
					w := randVec(rng, 3+(m-1)*ldw+k)[3:]
					out := make([]float32, (n-1)*ldo+m+1)
					for i := range out {
						out[i] = 7 // the gaps between output rows must keep it
					}
					MatMulStrided(out, ldo, x, ldx, n, w, ldw, m, k)
					want := make([]float32, m)
					for i := 0; i < n; i++ {
						if k >= shortVec {
							DotStrided(want, x[i*ldx:i*ldx+k], w, ldw)
						} else { // DotStrided runs Dot: the canonical one-row order
							dotRows(impl, &gemmArgs{out: want, x: x[i*ldx:], n: 1, w: w, ldw: ldw, k: k}, 0, 1, 0, m)
						}
						for j, v := range want {
							if got := out[i*ldo+j]; math.Float32bits(got) != math.Float32bits(v) {
								t.Fatalf("n=%d m=%d k=%d: out[%d][%d] = %g, DotStrided gives %g", n, m, k, i, j, got, v)
							}
						}
						if out[i*ldo+m] != 7 {
							t.Fatalf("n=%d m=%d k=%d: wrote out[%d][%d]", n, m, k, i, m)
						}
					}
				}
			}
		}
	})
}

// TestScoresBlocks: the scaled scores against keys in scattered blocks
// (a partial last one included) have the bits of DotStrided per row and
// block, then Scale, at every level, and nothing past np is written: up
// to 16 rows, blocks of 1 to 40 keys (more than one kernel call each).
func TestScoresBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	eachImpl(t, func(t *testing.T) {
		for _, k := range []int{16, 32, 33, 64, 128} {
			for _, bs := range []int{16, 5, 1, 24, 40} {
				for _, np := range []int{1, bs, 2*bs + 1, 4 * bs} {
					for _, n := range []int{1, 3, 4, 8, 9, 16} {
						nb := (np + bs - 1) / bs
						bt := make([]int32, nb)
						for b := range bt {
							bt[b] = int32((b*3 + 1) % 5)
						}
						ldx, ldw, ldo := k+3, 2*k+1, np+2
						blk := bs*ldw + 5
						x := randVec(rng, (n-1)*ldx+k)
						w := randVec(rng, 5*blk)
						out := make([]float32, (n-1)*ldo+np+1)
						for i := range out {
							out[i] = 7
						}
						const scale = 0.125
						ScoresBlocks(out, ldo, x, ldx, n, w, bt, blk, ldw, bs, np, k, scale)
						want := make([]float32, np)
						for i := 0; i < n; i++ {
							for b, p := 0, 0; p < np; b, p = b+1, p+bs {
								DotStrided(want[p:min(p+bs, np)], x[i*ldx:i*ldx+k], w[int(bt[b])*blk:], ldw)
							}
							Scale(want, scale)
							if !bitsEqual(out[i*ldo:i*ldo+np], want) {
								t.Fatalf("k=%d bs=%d np=%d n=%d: row %d differs from DotStrided per block, then Scale", k, bs, np, n, i)
							}
							if out[i*ldo+np] != 7 {
								t.Fatalf("k=%d bs=%d np=%d n=%d: wrote past row %d", k, bs, np, n, i)
							}
						}
					}
				}
			}
		}
	})
}

// TestMatMulAllocs: with a Pool, a MatMul allocates nothing once its
// scratch has grown (a forward pass calls it hundreds of times a token).
func TestMatMulAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	rows, cols := 300, 256
	wf := randVec(rng, rows*cols)
	mats := []*Mat{{Rows: rows, Cols: cols, Type: F32, F32: wf}, quantizeMat(rows, cols, wf)}
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		for _, w := range mats {
			for _, n := range []int{1, 5} {
				x := randVec(rng, n*cols)
				out := make([]float32, n*rows)
				p.MatMul(out, x, n, w)
				if a := testing.AllocsPerRun(20, func() { p.MatMul(out, x, n, w) }); a != 0 {
					t.Errorf("threads=%d %s n=%d: %v allocations per MatMul", threads, dtName(w.Type), n, a)
				}
			}
		}
		p.Close()
	}
}

// TestScoresBlocksSpecials: NaNs (with payloads), infinities, products
// that overflow, and block tables with repeated and out-of-order ids give
// the bits of DotStrided per row and block, then Scale, at every level,
// for several scales and tile shapes (the scores kernel's and its
// fallback's).
func TestScoresBlocksSpecials(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	specials := []float32{
		float32(math.Inf(1)), float32(math.Inf(-1)), 3e38, -3e38, 0, float32(math.Copysign(0, -1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc12345), math.Float32frombits(0x7fd00000),
	}
	eachImpl(t, func(t *testing.T) {
		for _, k := range []int{16, 40, 64, 128} {
			for _, bs := range []int{8, 16, 32, 40} {
				for _, n := range []int{1, 2, 4, 5, 8, 12, 16} {
					for _, scale := range []float32{1, 0.125, float32(1 / math.Sqrt(128)), 3} {
						bt := []int32{2, 2, 0, 3, 0}
						np := 4*bs + 3
						ldx, ldw, ldo, blk := k+2, k+1, np+1, bs*(k+1)+3
						x := randVec(rng, (n-1)*ldx+k)
						w := randVec(rng, 4*blk)
						for range 12 {
							x[rng.IntN(len(x))] = specials[rng.IntN(len(specials))]
							w[rng.IntN(len(w))] = specials[rng.IntN(len(specials))]
						}
						out := make([]float32, (n-1)*ldo+np)
						ScoresBlocks(out, ldo, x, ldx, n, w, bt, blk, ldw, bs, np, k, scale)
						want := make([]float32, np)
						for i := 0; i < n; i++ {
							for b, p := 0, 0; p < np; b, p = b+1, p+bs {
								DotStrided(want[p:min(p+bs, np)], x[i*ldx:i*ldx+k], w[int(bt[b])*blk:], ldw)
							}
							Scale(want, scale)
							if got := out[i*ldo : i*ldo+np]; !bitsEqual(got, want) {
								for p := range want {
									if math.Float32bits(got[p]) != math.Float32bits(want[p]) {
										t.Fatalf("k=%d bs=%d n=%d scale=%g: row %d key %d = %#x, want %#x", k, bs, n, scale, i, p, math.Float32bits(got[p]), math.Float32bits(want[p]))
									}
								}
							}
						}
					}
				}
			}
		}
	})
}
