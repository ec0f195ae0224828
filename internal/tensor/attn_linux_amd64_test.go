//go:build !purego

package tensor

import (
	"math/rand/v2"
	"slices"
	"testing"
)

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
				for _, bs := range []int{8, 16, 5, 40} {
					for _, n := range []int{1, 3, 4, 8, 13} {
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

// TestStridedRejectsBadArgs: the strided and block-table calls panic on a
// negative stride or block stride, a block size below 1 or a block table
// too short for the positions, rather than read or write outside their
// slices, at every level. The slices start at an inaccessible page, so a
// kernel that went ahead with a negative stride would fault.
func TestStridedRejectsBadArgs(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		buf, free := guardedFloatsHead(t, 4096)
		defer free()
		f := func(off, n int) []float32 { return buf[off : off+n] }
		for _, c := range []struct {
			name string
			call func()
		}{
			{"MatMulStrided ldw<0", func() { MatMulStrided(f(0, 256), 32, f(256, 256), 64, 4, f(512, 64), -1, 8, 64) }},
			{"MatMulStrided ldx<0", func() { MatMulStrided(f(0, 256), 32, f(256, 64), -1, 4, f(512, 512), 64, 8, 64) }},
			{"MatMulStrided ldo<0", func() { MatMulStrided(f(0, 32), -1, f(256, 256), 64, 4, f(512, 512), 64, 8, 64) }},
			{"MatMulStrided small ldw<0", func() { MatMulStrided(f(0, 256), 32, f(256, 256), 64, 2, f(512, 64), -1, 3, 64) }},
			{"DotStrided stride<0", func() { DotStrided(f(0, 8), f(256, 64), f(512, 64), -1) }},
			{"AxpyStrided stride<0", func() { AxpyStrided(f(0, 64), f(256, 2), f(512, 64), -16) }},
			{"AxpyStrided4 stride<0", func() { AxpyStrided4(f(0, 256), 64, f(256, 8), 2, f(512, 64), -16, 2, 64) }},
			{"AxpyStrided4 lda<0", func() { AxpyStrided4(f(0, 256), 64, f(256, 8), -1, f(512, 64), 16, 2, 16) }},
			{"AxpyBlocks stride<0", func() { AxpyBlocks(f(0, 256), 64, f(256, 8), 2, 4, f(512, 64), []int32{0}, 64, -16, 2, 64) }},
			{"AxpyBlocks blk<0", func() { AxpyBlocks(f(0, 256), 64, f(256, 8), 2, 4, f(512, 256), []int32{0, 1}, -64, 16, 1, 64) }},
			{"AxpyBlocks block<0", func() { AxpyBlocks(f(0, 256), 64, f(256, 8), 2, 4, f(512, 256), []int32{0, -1}, 64, 16, 1, 64) }},
			{"AxpyBlocks rows%4", func() { AxpyBlocks(f(0, 256), 64, f(256, 8), 2, 3, f(512, 256), []int32{0}, 64, 16, 1, 64) }},
			{"ScoresBlocks ldw<0", func() { ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 64), []int32{0}, 0, -1, 16, 16, 64, 1) }},
			{"ScoresBlocks blk<0", func() {
				ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 1024), []int32{0, 1}, -64, 64, 1, 2, 64, 1)
			}},
			{"ScoresBlocks block<0", func() {
				ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 1024), []int32{0, -1}, 64, 64, 1, 2, 64, 1)
			}},
			{"ScoresBlocks bs=0", func() { ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 1024), []int32{0}, 64, 64, 0, 2, 64, 1) }},
			{"ScoresBlocks bs<0", func() { ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 1024), []int32{0}, 64, 64, -4, 2, 64, 1) }},
			{"ScoresBlocks short table", func() { ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 1024), []int32{0}, 64, 64, 1, 2, 64, 1) }},
			{"ScoresBlocks short out", func() {
				ScoresBlocks(f(0, 40), 32, f(256, 128), 64, 2, f(512, 1024), []int32{0}, 64, 64, 16, 16, 64, 1)
			}},
			{"ScoresBlocks short w", func() { ScoresBlocks(f(0, 64), 32, f(256, 64), 64, 1, f(512, 64), []int32{0, 1}, 64, 64, 1, 2, 64, 1) }},
		} {
			if r := panics(c.call); r == nil {
				t.Errorf("%s: no panic", c.name)
			} else if testing.Verbose() {
				t.Logf("%s: %v", c.name, r)
			}
		}
	})
}

// panics runs f and returns what it panicked with (nil if it returned).
func panics(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}
