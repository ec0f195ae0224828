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

// TestQ4kGemvGuarded runs q4kGemv2x1 with the packed weights, the
// activation and the outputs (a partial second group) flush against
// inaccessible pages, against the Go reference on the GGML blocks.
func TestQ4kGemvGuarded(t *testing.T) {
	if !slices.ContainsFunc(archImpls(), func(k *kernels) bool { return k.name == "avx512" }) {
		t.Skip("no avx512 level on this CPU")
	}
	rng := rand.New(rand.NewPCG(93, 94))
	c := CodecOf(Q4_K)
	for _, s := range []struct{ rows, cols int }{{17, 256}, {20, 512}, {32, 256}} {
		q := randBlocks(rng, c, s.rows*s.cols/256)
		nb := s.cols / 256
		p, free := guardedBytes(t, kpPackedBytes(s.rows, s.cols, q4kRecord))
		defer free()
		copy(p, packQ4K(q, s.rows, s.cols))
		x := randVec(rng, s.cols)
		a := quantizeAct(c, x, 1, s.cols)
		xq, free2 := guardedBytes(t, s.cols)
		defer free2()
		copy(xq, int8AsBytes(a.q))
		bsb, free3 := guardedBytes(t, 4*nb*8)
		defer free3()
		bs := unsafe.Slice((*int32)(unsafe.Pointer(&bsb[0])), nb*8)
		for k := range bs {
			bs[k] = a.bsum[2*k] + a.bsum[2*k+1]
		}
		out, free4 := guardedFloats(t, s.rows)
		defer free4()
		mask := uint64(1)<<min(s.rows, 32) - 1
		q4kGemv2x1(&out[0], &int8sOf(xq)[0], &a.d[0], &bs[0], &p[0], &p[nb*q4kRecord], nb, mask)
		want := make([]float32, s.rows)
		blockRows(want, a, 1, &Mat{Rows: s.rows, Cols: s.cols, Type: Q4_K, Q: q}, c, 0, s.rows)
		for r := range want {
			if math.Float32bits(out[r]) != math.Float32bits(want[r]) {
				t.Fatalf("%dx%d: out[%d] = %v, reference %v", s.rows, s.cols, r, out[r], want[r])
			}
		}
	}
}

// TestKGemv1Guarded runs the one-group K kernels (q3kGemv1x1,
// q5kGemv1x1, q6kGemv1x1) with the packed weights, the activation, its aux values and
// the outputs (a partial group) flush against inaccessible pages, against
// the Go reference on the GGML blocks.
func TestKGemv1Guarded(t *testing.T) {
	if !slices.ContainsFunc(archImpls(), func(k *kernels) bool { return k.name == "avx512" }) {
		t.Skip("no avx512 level on this CPU")
	}
	rng := rand.New(rand.NewPCG(95, 96))
	for _, f := range []struct {
		typ    DType
		pack   func(q []byte, rows, cols int) []byte
		rec    int
		kernel func(out *float32, x *int8, xd *float32, aux *int32, w *byte, nb int, mask uint64)
	}{{Q3_K, packQ3K, q3kRecord, q3kGemv1x1}, {Q5_K, packQ5K, q5kRecord, q5kGemv1x1}, {Q6_K, packQ6K, q6kRecord, q6kGemv1x1}} {
		c := CodecOf(f.typ)
		for _, s := range []struct{ rows, cols int }{{9, 256}, {16, 512}} {
			q := randBlocks(rng, c, s.rows*s.cols/256)
			nb := s.cols / 256
			p, free := guardedBytes(t, nb*f.rec)
			defer free()
			copy(p, f.pack(q, s.rows, s.cols))
			a := quantizeAct(c, randVec(rng, s.cols), 1, s.cols)
			xq, free2 := guardedBytes(t, s.cols)
			defer free2()
			copy(xq, int8AsBytes(a.q))
			var auxv []int32
			if f.typ != Q5_K { // −4·Σ (Q3_K), −32·Σ (Q6_K) per four values
				auxv = make([]int32, s.cols/4)
				q8lCorr(auxv, a.q)
				for k := range auxv {
					auxv[k] /= map[DType]int32{Q3_K: 32, Q6_K: 4}[f.typ]
				}
			} else {
				for k := 0; k < s.cols/32; k++ {
					auxv = append(auxv, a.bsum[2*k]+a.bsum[2*k+1])
				}
			}
			auxb, free3 := guardedBytes(t, 4*len(auxv))
			defer free3()
			aux := unsafe.Slice((*int32)(unsafe.Pointer(&auxb[0])), len(auxv))
			copy(aux, auxv)
			out, free4 := guardedFloats(t, s.rows)
			defer free4()
			f.kernel(&out[0], &int8sOf(xq)[0], &a.d[0], &aux[0], &p[0], nb, uint64(1)<<s.rows-1)
			want := make([]float32, s.rows)
			blockRows(want, a, 1, &Mat{Rows: s.rows, Cols: s.cols, Type: f.typ, Q: q}, c, 0, s.rows)
			for r := range want {
				if math.Float32bits(out[r]) != math.Float32bits(want[r]) {
					t.Fatalf("%s %dx%d: out[%d] = %v, reference %v", c.Name, s.rows, s.cols, r, out[r], want[r])
				}
			}
		}
	}
}
