//go:build !purego

package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestQ8lGemvGuarded runs q8lGemv2x1 with every operand flush against an
// inaccessible page (the outputs of a partial second group too: its masked
// stores must not touch past them) and checks it against ggmlQ8Ref.
func TestQ8lGemvGuarded(t *testing.T) {
	if !slices.ContainsFunc(archImpls(), func(k *kernels) bool { return k.name == "avx512" }) {
		t.Skip("no avx512 level on this CPU")
	}
	rng := rand.New(rand.NewPCG(83, 84))
	for _, s := range []struct{ rows, cols int }{{17, 32}, {20, 96}, {32, 64}} {
		w := quantizeMat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
		nb := s.cols / 32
		p, free := guardedBytes(t, q8PackedBytes(s.rows, s.cols))
		defer free()
		copy(p, packQ8(w.Q, s.rows, s.cols))
		x := randVec(rng, s.cols)
		xq8, xd := make([]int8, s.cols), make([]float32, nb)
		quantizeRow(xq8, xd, x)
		xq, free2 := guardedBytes(t, s.cols)
		defer free2()
		copy(xq, int8AsBytes(xq8))
		xcb, free3 := guardedBytes(t, s.cols)
		defer free3()
		xc := unsafe.Slice((*int32)(unsafe.Pointer(&xcb[0])), s.cols/4)
		q8lCorr(xc, xq8)
		xsb, free4 := guardedBytes(t, 8*nb)
		defer free4()
		xs := unsafe.Slice((*uint32)(unsafe.Pointer(&xsb[0])), 2*nb)
		q8pScales(xs, xq8, xd)
		out, free5 := guardedFloats(t, s.rows)
		defer free5()
		wb := nb * q8GroupBlock
		scales := p[2*wb:]
		mask := uint64(1)<<min(s.rows, 32) - 1
		q8lGemv2x1(&out[0], &int8sOf(xq)[0], &xc[0], &xs[0], &p[0], &p[wb], &scales[0], &scales[nb*q8GroupScale], nb, mask)
		want := ggmlQ8Ref(w.Q, s.rows, s.cols, x, 1)
		for r := range want {
			if math.Float32bits(out[r]) != math.Float32bits(want[r]) {
				t.Fatalf("%dx%d: out[%d] = %v, GGML order %v", s.rows, s.cols, r, out[r], want[r])
			}
		}
	}
}

func int8sOf(b []byte) []int8 { return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b)) }
