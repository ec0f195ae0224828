//go:build !purego

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestMatMulQ4PackedGuardPages: packed Q4_0 MatMul with the packed weights
// and the outputs each ending at an inaccessible page, at every level
// (the avx512 kernels' tails: partial last groups, whose masked-off
// outputs lie past out's end, odd block counts, the one-row kernels'
// prefetch of the next groups, which runs past the page on purpose and
// must not fault, the unpacked tiles), gives the results of ordinary
// memory: no access past either slice.
func TestMatMulQ4PackedGuardPages(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 68))
	defer func(v int) { q4pUnpackMin = v }(q4pUnpackMin)
	p := NewPool(2)
	defer p.Close()
	eachQ4Impl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{{1, 32}, {33, 96}, {130, 288}, {200, 256}, {136, 64}} {
			w4 := quantizeQ4Mat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
			packed := packQ4(w4.Q, s.rows, s.cols)
			gp, freeP := guardedBytes(t, len(packed))
			copy(gp, packed)
			for _, n := range []int{1, 2, 3, 4, 5, 7, 9, 49} {
				x := randVec(rng, n*s.cols)
				for _, um := range []int{8, 48} {
					q4pUnpackMin = um
					for _, pool := range []*Pool{nil, p} {
						want := make([]float32, n*s.rows)
						pool.MatMul(want, x, n, &Mat{Rows: s.rows, Cols: s.cols, Type: Q4_0, P: packed})
						ob, freeO := guardedBytes(t, 4*n*s.rows)
						out := unsafe.Slice((*float32)(unsafe.Pointer(&ob[0])), n*s.rows)
						pool.MatMul(out, x, n, &Mat{Rows: s.rows, Cols: s.cols, Type: Q4_0, P: gp})
						for i := range want {
							if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%dx%d n=%d: out[%d] = %v, want %v", s.rows, s.cols, n, i, out[i], want[i])
							}
						}
						freeO()
					}
				}
			}
			freeP()
		}
	})
}
