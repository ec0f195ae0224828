//go:build !purego

package tensor

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"unsafe"
)

// guardedFloatsHead is guardedFloats with the floats starting flush
// against the inaccessible page before them: a kernel touching a float
// before the first faults.
func guardedFloatsHead(t *testing.T, n int) (f []float32, free func()) {
	t.Helper()
	pg := syscall.Getpagesize()
	data := (4*n + pg - 1) / pg * pg
	mem, err := syscall.Mmap(-1, 0, pg+data+pg, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	for _, g := range [][]byte{mem[:pg], mem[pg+data:]} {
		if err := syscall.Mprotect(g, syscall.PROT_NONE); err != nil {
			t.Fatal("mprotect:", err)
		}
	}
	f = unsafe.Slice((*float32)(unsafe.Pointer(&mem[pg])), n)
	return f, func() { syscall.Munmap(mem) }
}

// guarded copies src to floats flush against an inaccessible page: after
// the last (head false) or before the first (head true).
func guarded(t *testing.T, src []float32, head bool) (f []float32, free func()) {
	t.Helper()
	if head {
		f, free = guardedFloatsHead(t, len(src))
	} else {
		f, free = guardedFloats(t, len(src))
	}
	copy(f, src)
	return f, free
}

// TestAttnGuardPages runs MatMulStrided (the scores kernel up to 8×16),
// ScoresBlocks and AxpyBlocks at every level with each slice ending, then
// starting, at an inaccessible page: every row and key count of the
// scores kernel's tiles, head sizes below 16, with and without a k%16
// tail, up to 256, blocks whose highest is the end of w (v). Any access
// outside a slice the wrapper checked crashes the test, and the results
// must equal the same calls on ordinary memory.
func TestAttnGuardPages(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	eachImpl(t, func(t *testing.T) {
		for _, head := range []bool{false, true} {
			for _, k := range []int{1, 5, 15, 16, 17, 31, 33, 48, 64, 100, 128, 144, 256} {
				for n := 1; n <= scoresRows; n++ {
					for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17} {
						ldx, ldw, ldo := k+1, k+3, m+2
						x := randVec(rng, (n-1)*ldx+k)
						w := randVec(rng, (m-1)*ldw+k)
						out := randVec(rng, (n-1)*ldo+m)
						want := slices.Clone(out)
						MatMulStrided(want, ldo, x, ldx, n, w, ldw, m, k)
						gx, fx := guarded(t, x, head)
						gw, fw := guarded(t, w, head)
						gout, fout := guarded(t, out, head)
						MatMulStrided(gout, ldo, gx, ldx, n, gw, ldw, m, k)
						if !bitsEqual(gout, want) {
							t.Errorf("MatMulStrided n=%d m=%d k=%d head=%v: differs on guarded memory", n, m, k, head)
						}
						fx()
						fw()
						fout()
					}
				}
				for _, bs := range []int{8, 16, 5} {
					for _, n := range []int{1, 3, 4, 8} {
						np := 2*bs + 3
						bt := []int32{2, 0, 1}
						ldx, ldw, ldo, blk := k+1, k+3, np+1, bs*(k+3)+2
						wLen := 0
						for b, p := 0, 0; p < np; b, p = b+1, p+bs {
							wLen = max(wLen, int(bt[b])*blk+(min(bs, np-p)-1)*ldw+k)
						}
						x := randVec(rng, (n-1)*ldx+k)
						w := randVec(rng, wLen)
						out := randVec(rng, (n-1)*ldo+np)
						want := slices.Clone(out)
						ScoresBlocks(want, ldo, x, ldx, n, w, bt, blk, ldw, bs, np, k, 0.125)
						gx, fx := guarded(t, x, head)
						gw, fw := guarded(t, w, head)
						gout, fout := guarded(t, out, head)
						ScoresBlocks(gout, ldo, gx, ldx, n, gw, bt, blk, ldw, bs, np, k, 0.125)
						if !bitsEqual(gout, want) {
							t.Errorf("ScoresBlocks n=%d bs=%d k=%d head=%v: differs on guarded memory", n, bs, k, head)
						}
						fx()
						fw()
						fout()
					}
				}
			}
			for _, hd := range []int{16, 32, 48, 64, 128, 256} {
				for _, bs := range []int{1, 3, 8, 16, 32} {
					for _, n := range []int{4, 8} {
						bt := []int32{1, 3, 0, 3}
						nb := len(bt)
						ldy, lda, stride, blk := hd+3, nb*bs+1, hd+5, bs*(hd+5)+1
						y := randVec(rng, (n-1)*ldy+hd)
						a := randVec(rng, (n-1)*lda+nb*bs)
						v := randVec(rng, 3*blk+(bs-1)*stride+hd)
						want := slices.Clone(y)
						AxpyBlocks(want, ldy, a, lda, n, v, bt, blk, stride, bs, hd)
						gy, fy := guarded(t, y, head)
						ga, fa := guarded(t, a, head)
						gv, fv := guarded(t, v, head)
						AxpyBlocks(gy, ldy, ga, lda, n, gv, bt, blk, stride, bs, hd)
						if !bitsEqual(gy, want) {
							t.Errorf("AxpyBlocks n=%d bs=%d hd=%d head=%v: differs on guarded memory", n, bs, hd, head)
						}
						fy()
						fa()
						fv()
					}
				}
			}
		}
	})
}
