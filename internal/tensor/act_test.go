package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{1, 2, 7, 15, 16, 17, 33, 100, 1000} {
			for _, spread := range []float64{0.1, 5, 100} {
				t.Run(fmt.Sprintf("n=%d/spread=%g", n, spread), func(t *testing.T) {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(rng.NormFloat64()*spread + 3)
					}
					if n > 3 {
						x[1] = float32(math.Inf(-1)) // a masked score
					}
					m := math.Inf(-1)
					for _, v := range x {
						m = max(m, float64(v))
					}
					want := make([]float64, n)
					var s float64
					for i, v := range x {
						want[i] = math.Exp(float64(v) - m)
						s += want[i]
					}
					Softmax(x)
					var sum float64
					for i := range x {
						want[i] /= s
						sum += float64(x[i])
						// float32 sums: relative error grows like √n.
						if e := math.Abs(float64(x[i]) - want[i]); e > (1e-6+2e-7*math.Sqrt(float64(n)))*want[i]+1e-7 || math.IsNaN(float64(x[i])) {
							t.Fatalf("x[%d] = %v, want %v", i, x[i], want[i])
						}
					}
					if math.Abs(sum-1) > 1e-5 {
						t.Fatalf("sum %v", sum)
					}
				})
			}
		}
	})
}

func TestSwiGLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{1, 5, 16, 17, 31, 172, 1000} {
			g := make([]float32, n)
			u := make([]float32, n)
			for i := range g {
				g[i] = float32(rng.NormFloat64() * 4)
				u[i] = float32(rng.NormFloat64())
			}
			g[0] = 200 // silu(g) = g
			if n > 1 {
				g[1] = -200 // silu(g) = -0
			}
			want := make([]float64, n)
			for i := range g {
				x := float64(g[i])
				want[i] = x / (1 + math.Exp(-x)) * float64(u[i])
			}
			SwiGLU(g, u)
			for i := range g {
				if e := math.Abs(float64(g[i]) - want[i]); e > 2e-6*math.Abs(want[i])+1e-30 || math.IsNaN(float64(g[i])) {
					t.Fatalf("n=%d: gate[%d] = %v, want %v", n, i, g[i], want[i])
				}
			}
		}
	})
}

func TestExpf(t *testing.T) {
	for x := float32(-87); x < 88; x += 0.37 {
		want := math.Exp(float64(x))
		if got := float64(expf(x)); math.Abs(got-want) > 3e-7*want {
			t.Fatalf("expf(%v) = %v, want %v", x, got, want)
		}
	}
}

// TestScale: Scale gives the plain loop's bits at every level and length.
func TestScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 64, 100} {
			x := randVec(rng, n+1)
			want := slices.Clone(x)
			for i := range want[:n] {
				want[i] *= 0.125 + float32(n)/7
			}
			Scale(x[:n], 0.125+float32(n)/7)
			if !bitsEqual(x, want) {
				t.Fatalf("n=%d: Scale differs from the loop (or wrote past n)", n)
			}
		}
	})
}

// TestAxpyStrided4: four rows at once give the bits of four AxpyStrided
// calls, at every level, for head sizes with and without a kernel.
func TestAxpyStrided4(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	eachImpl(t, func(t *testing.T) {
		for _, c := range []struct{ hd, np, stride int }{{64, 16, 96}, {64, 13, 64}, {64, 3, 80}, {128, 7, 256}, {48, 9, 48}, {32, 1, 40}, {20, 5, 24}} {
			ldy, lda := c.hd+5, c.np+3
			y := randVec(rng, 3*ldy+c.hd+1)
			a := randVec(rng, 3*lda+c.np)
			v := randVec(rng, (c.np-1)*c.stride+c.hd)
			want := slices.Clone(y)
			for r := range 4 {
				AxpyStrided(want[r*ldy:r*ldy+c.hd], a[r*lda:r*lda+c.np], v, c.stride)
			}
			AxpyStrided4(y, ldy, a, lda, v, c.stride, c.np, c.hd)
			if !bitsEqual(y, want) {
				t.Fatalf("hd=%d np=%d: differs from four AxpyStrided calls", c.hd, c.np)
			}
		}
	})
}

// TestAxpyBlocks: whole blocks of value rows at scattered places give
// 4 and 8 rows the bits of one AxpyStrided4 call per block and group of
// four rows, in block order, at every level, for head sizes with and
// without a kernel.
func TestAxpyBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	eachImpl(t, func(t *testing.T) {
		for _, c := range []struct{ hd, bs, stride int }{{64, 16, 96}, {64, 13, 64}, {64, 3, 80}, {128, 16, 256}, {48, 9, 48}, {32, 1, 40}, {16, 4, 16}, {20, 5, 24}, {256, 32, 272}, {80, 8, 80}, {96, 0, 96}} {
			for _, bt := range [][]int32{{0}, {2, 0}, {3, 1, 4, 0, 2}} {
				for _, n := range []int{4, 8} {
					nb := len(bt)
					blk := c.bs*c.stride + 7
					ldy, lda := c.hd+5, nb*c.bs+3
					y := randVec(rng, (n-1)*ldy+c.hd+1)
					a := randVec(rng, (n-1)*lda+nb*c.bs)
					v := randVec(rng, 5*blk)
					want := slices.Clone(y)
					for b, id := range bt {
						for g := 0; g < n; g += 4 {
							AxpyStrided4(want[g*ldy:], ldy, a[g*lda+b*c.bs:], lda, v[int(id)*blk:], c.stride, c.bs, c.hd)
						}
					}
					AxpyBlocks(y, ldy, a, lda, n, v, bt, blk, c.stride, c.bs, c.hd)
					if !bitsEqual(y, want) {
						t.Fatalf("hd=%d bs=%d n=%d blocks %v: differs from AxpyStrided4 per block", c.hd, c.bs, n, bt)
					}
				}
			}
		}
	})
}

// TestRMSNorm: at every level, RMSNorm is within float32 rounding of the
// float64 formula, the same bits on a second call, and writes len(x)
// outputs only.
func TestRMSNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	eachImpl(t, func(t *testing.T) {
		for _, n := range []int{1, 7, 8, 15, 16, 31, 32, 33, 64, 100, 768, 2050} {
			x, w := randVec(rng, n), randVec(rng, n)
			out := make([]float32, n+1)
			out[n] = 42
			RMSNorm(out[:n], x, w, 1e-5)
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			s := 1 / math.Sqrt(ss/float64(n)+1e-5)
			for i, v := range x {
				want := float64(v) * s * float64(w[i])
				if math.Abs(float64(out[i])-want) > 1e-6*(1+math.Abs(want)) {
					t.Fatalf("n=%d: out[%d] = %v, want %v", n, i, out[i], want)
				}
			}
			again := make([]float32, n)
			RMSNorm(again, x, w, 1e-5)
			if out[n] != 42 || !bitsEqual(out[:n], again) {
				t.Fatalf("n=%d: wrote past len(x) or not deterministic", n)
			}
		}
	})
}

// TestRope: at every level, Rope gives the scalar loop's bits and leaves
// a trailing partial segment alone.
func TestRope(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	eachImpl(t, func(t *testing.T) {
		for _, c := range []struct{ h, n int }{{32, 64}, {32, 64*12 + 5}, {8, 16}, {16, 96}, {4, 40}, {64, 128 * 3}} {
			x := randVec(rng, c.n)
			cs, sn := randVec(rng, c.h), randVec(rng, c.h)
			want := slices.Clone(x)
			for off := 0; off+2*c.h <= c.n; off += 2 * c.h {
				v := want[off : off+2*c.h]
				for i := 0; i < c.h; i++ {
					a, b := v[2*i], v[2*i+1]
					v[2*i] = a*cs[i] - b*sn[i]
					v[2*i+1] = a*sn[i] + b*cs[i]
				}
			}
			Rope(x, cs, sn)
			if !bitsEqual(x, want) {
				t.Fatalf("h=%d n=%d: Rope differs from the loop", c.h, c.n)
			}
		}
	})
}
