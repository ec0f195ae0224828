//go:build amd64 && !purego

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func haveAVX512F32p(t *testing.T) {
	t.Helper()
	if !slices.ContainsFunc(archImpls(), func(k *kernels) bool { return k.name == "avx512" }) {
		t.Skip("no avx512 level on this CPU")
	}
}

// TestF32pKernels calls every generated kernel (every entry of f32pAsm)
// through f32pAVX512 and checks it against the definition: out[i·ldo+j] =
// the FMA chain over the columns in order from zero or (flags&1) from out,
// for j < valid; for k below, at and above the unroll (tail and loop
// paths), both flags, partial masks of the one-panel kernels (either
// half), row gaps (ldo > outputs) and panel gaps (ps > 32·k). Everything
// the kernel must not touch is a sentinel: NaN where it must not read
// (past x and W, between panels), and out outside the valid outputs must
// keep its bits.
func TestF32pKernels(t *testing.T) {
	haveAVX512F32p(t)
	rng := rand.New(rand.NewPCG(61, 62))
	nan := float32(math.NaN())
	const guard = 64
	shapes := 0
	for zi := range f32pAsm {
		for mr, f := range f32pAsm[zi] {
			if f == nil {
				continue
			}
			shapes++
			nz := 2 * (zi + 1)
			for _, k := range []int{1, 2, 3, 4, 5, 7, 9, 33} {
				for _, flags := range []int{0, 1} {
					valids := []int{16 * nz}
					if nz == 2 {
						valids = []int{32, 1 + rng.IntN(15), 16, 17 + rng.IntN(15)}
					}
					for _, valid := range valids {
						name := fmt.Sprintf("%dx%d/k=%d/flags=%d/valid=%d", mr, nz, k, flags, valid)
						ldo := 16*nz + rng.IntN(3)*7
						ps := f32pNR * (k + rng.IntN(2)*3)
						xp := make([]float32, mr*k+guard)
						for i := range xp {
							xp[i] = nan
						}
						for i := range mr * k {
							xp[i] = rng.Float32()*2 - 1
						}
						wlen := (nz/2-1)*ps + f32pNR*k
						w := make([]float32, wlen+guard)
						for i := range w {
							w[i] = nan
						}
						for pn := range nz / 2 {
							for i := range f32pNR * k {
								w[pn*ps+i] = rng.Float32()*2 - 1
							}
						}
						outLen := (mr-1)*ldo + valid
						buf := make([]float32, guard+outLen+guard)
						for i := range buf {
							buf[i] = float32(-1000 - i) // sentinels
						}
						out := buf[guard : guard+outLen]
						want := make([]float32, len(buf))
						copy(want, buf)
						for i := range mr {
							for j := range valid {
								o := guard + i*ldo + j
								if flags&1 != 0 {
									buf[o] = rng.Float32()*4 - 2
								}
								s := float32(0)
								if flags&1 != 0 {
									s = buf[o]
								}
								for c := range k {
									s = fma32(xp[c*mr+i], w[j/f32pNR*ps+c*f32pNR+j%f32pNR], s)
								}
								want[o] = s
							}
						}
						f32pAVX512(out, ldo, xp[:mr*k], mr, w[:wlen], ps, nz, k, flags, valid, w[:1], 4096)
						for i := range buf {
							if math.Float32bits(buf[i]) != math.Float32bits(want[i]) {
								where := "a gap between outputs"
								if r := i - guard; r < 0 || r >= outLen {
									where = "outside out"
								} else if r%ldo < valid {
									where = fmt.Sprintf("output [%d][%d]", r/ldo, r%ldo)
								}
								t.Fatalf("%s: buf[%d] (%s) = %v, want %v", name, i, where, buf[i], want[i])
							}
						}
					}
				}
			}
		}
	}
	if shapes != 20 {
		t.Fatalf("%d kernels in f32pAsm, the test expects 20 (update it)", shapes)
	}
}

// TestF32pPackX: the scatter kernel writes exactly packXCols' floats, for
// every height it takes (the x tiles' 1–14, 15, the weight panels' 16)
// and column counts around its 16-float steps (the masked tail), reading
// nothing between or past the rows.
func TestF32pPackX(t *testing.T) {
	haveAVX512F32p(t)
	rng := rand.New(rand.NewPCG(63, 64))
	nan := float32(math.NaN())
	const guard = 40
	for mr := 1; mr <= 16; mr++ {
		for _, kb := range []int{1, 2, 15, 16, 17, 31, 32, 33, 47, 100} {
			ldx := kb + rng.IntN(3)*5
			xlen := (mr-1)*ldx + kb
			x := make([]float32, xlen+guard)
			for i := range x {
				x[i] = nan
			}
			for i := range mr {
				for c := range kb {
					x[i*ldx+c] = rng.Float32()
				}
			}
			got := make([]float32, mr*kb+guard)
			want := make([]float32, mr*kb+guard)
			for i := range got {
				got[i] = float32(-1 - i)
				want[i] = got[i]
			}
			packXCols(want[:mr*kb], x[:xlen], ldx, mr, kb, mr)
			f32pPackX(got[:mr*kb], x[:xlen], ldx, mr, kb, mr)
			if !bitsEqual(got, want) {
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("mr=%d kb=%d ldx=%d: dst[%d] = %v, want %v", mr, kb, ldx, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestF32pBadArgs: the wrapper refuses what its bounds checks could not
// cover rather than letting the kernel run outside the slices.
func TestF32pBadArgs(t *testing.T) {
	haveAVX512F32p(t)
	out, xp, w, pf := make([]float32, 4096), make([]float32, 4096), make([]float32, 4096), make([]float32, 1)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"odd nz", func() { f32pAVX512(out, 32, xp, 1, w, 32, 3, 4, 0, 48, pf, 0) }},
		{"nz=6", func() { f32pAVX512(out, 96, xp, 1, w, 32, 6, 4, 0, 96, pf, 0) }},
		{"wide, part valid", func() { f32pAVX512(out, 64, xp, 4, w, 128, 4, 4, 0, 60, pf, 0) }},
		{"mr=15", func() { f32pAVX512(out, 32, xp, 15, w, 128, 2, 4, 0, 32, pf, 0) }},
		{"k=0", func() { f32pAVX512(out, 32, xp, 2, w, 128, 2, 0, 0, 32, pf, 0) }},
		{"valid=33", func() { f32pAVX512(out, 64, xp, 2, w, 128, 2, 4, 0, 33, pf, 0) }},
		// Negative strides that the bounds checks alone would let through
		// (the kernel would then run before the slice).
		{"ldo<0", func() { f32pAVX512(out[64:], -1, xp, 2, w, 128, 2, 4, 0, 32, pf, 0) }},
		{"ps<0", func() { f32pAVX512(out, 64, xp, 3, w[1024:], -1, 4, 4, 0, 64, pf, 0) }},
		{"short out", func() { f32pAVX512(out[:63], 32, xp, 2, w, 128, 2, 4, 0, 32, pf, 0) }},
		{"short xp", func() { f32pAVX512(out, 32, xp[:7], 2, w, 128, 2, 4, 0, 32, pf, 0) }},
		{"short w", func() { f32pAVX512(out, 64, xp, 3, w[:32*4+127], 128, 4, 4, 0, 64, pf, 0) }},
		{"pack ldx<0", func() { f32pPackX(out, xp[64:], -1, 2, 16, 2) }},
		{"pack short dst", func() { f32pPackX(out[:31], xp, 16, 2, 16, 2) }},
		{"pack short x", func() { f32pPackX(out, xp[:31], 16, 2, 16, 2) }},
		// The kernel holds 16 rows, and columns closer than mr overlap.
		{"pack mr=17", func() { f32pPackX(out, xp, 16, 17, 16, 32) }},
		{"pack ldd<mr", func() { f32pPackX(out, xp, 16, 4, 16, 3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			c.f()
		})
	}
}

// TestF32pPackXStride: with ldd > mr (the weight packing: 16 rows into
// columns 32 floats apart), the kernel writes each column's mr floats
// where packXCols does and leaves the gaps between them alone.
func TestF32pPackXStride(t *testing.T) {
	haveAVX512F32p(t)
	rng := rand.New(rand.NewPCG(65, 66))
	for _, c := range []struct{ mr, kb, ldd int }{{16, 40, 32}, {16, 16, 32}, {5, 33, 7}, {1, 17, 16}, {16, 1, 32}} {
		x := randVec(rng, c.mr*c.kb)
		n := (c.kb-1)*c.ldd + c.mr
		got, want := make([]float32, n+8), make([]float32, n+8)
		for i := range got {
			got[i], want[i] = float32(-1-i), float32(-1-i)
		}
		packXCols(want, x, c.kb, c.mr, c.kb, c.ldd)
		f32pPackX(got[:n], x, c.kb, c.mr, c.kb, c.ldd)
		if !bitsEqual(got, want) {
			t.Fatalf("mr=%d kb=%d ldd=%d: packed floats differ", c.mr, c.kb, c.ldd)
		}
	}
}
