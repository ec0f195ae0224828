//go:build !purego

package tensor

import (
	"math/rand/v2"
	"testing"
)

// TestF32pKernelsGuardPages runs every kernel with out, xp, W and pf each
// ending at an inaccessible page, for partial masks (whose masked-off
// outputs are the floats past out's end) and resumed sums (masked loads),
// and the pack kernel with x and dst so placed (its masked tail, column
// strides beyond the height): any
// access past a slice the wrapper checked crashes the test. The prefetch
// runs past its page on purpose (prefetches do not fault). The results
// must equal the same calls on ordinary memory.
func TestF32pKernelsGuardPages(t *testing.T) {
	haveAVX512F32p(t)
	rng := rand.New(rand.NewPCG(65, 66))
	fill := func(dst []float32) {
		for i := range dst {
			dst[i] = rng.Float32()*2 - 1
		}
	}
	for zi := range f32pAsm {
		for mr, f := range f32pAsm[zi] {
			if f == nil {
				continue
			}
			nz := 2 * (zi + 1)
			// k below, at and past the unroll (2 or 4 columns): the tail
			// alone, the loop alone (its last column the end of W), both.
			for _, k := range []int{1, 2, 3, 4, 5, 6} {
				valids := []int{16 * nz}
				if nz == 2 {
					valids = []int{32, 1, 9, 16, 17, 31}
				}
				for _, valid := range valids {
					for _, flags := range []int{0, 1} {
						ldo, ps := 16*nz+3, f32pNR*k+32
						outLen, xLen, wLen := (mr-1)*ldo+valid, mr*k, (nz/2-1)*ps+f32pNR*k
						out, freeOut := guardedFloats(t, outLen)
						xp, freeX := guardedFloats(t, xLen)
						w, freeW := guardedFloats(t, wLen)
						pf, freePF := guardedFloats(t, 1)
						fill(out)
						fill(xp)
						fill(w)
						want := append([]float32(nil), out...)
						f32pAVX512(want, ldo, append([]float32(nil), xp...), mr, append([]float32(nil), w...), ps, nz, k, flags, valid, make([]float32, 1), 0)
						f32pAVX512(out, ldo, xp, mr, w, ps, nz, k, flags, valid, pf, 4096)
						if !bitsEqual(out, want) {
							t.Errorf("%dx%d k=%d valid=%d flags=%d: results differ on guarded memory", mr, nz, k, valid, flags)
						}
						freeOut()
						freeX()
						freeW()
						freePF()
					}
				}
			}
		}
	}
	// Every height the pack kernel takes (the x tiles' 1–14, the weight
	// panels' 16) with ldd = mr (x tiles) and ldd > mr (weight panels:
	// dst's last float is the last column's row mr-1, flush against the
	// page).
	for mr := 1; mr <= 16; mr++ {
		for _, ldd := range []int{mr, mr + 3, 32} {
			for _, kb := range []int{1, 2, 15, 16, 17, 33} {
				ldx := kb + 3
				n := (kb-1)*ldd + mr
				x, freeX := guardedFloats(t, (mr-1)*ldx+kb)
				dst, freeDst := guardedFloats(t, n)
				fill(x)
				fill(dst)
				want := append([]float32(nil), dst...)
				packXCols(want, x, ldx, mr, kb, ldd)
				f32pPackX(dst, x, ldx, mr, kb, ldd)
				if !bitsEqual(dst, want) {
					t.Errorf("pack mr=%d ldd=%d kb=%d: results differ on guarded memory", mr, ldd, kb)
				}
				freeX()
				freeDst()
			}
		}
	}
}
