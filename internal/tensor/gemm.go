package tensor

import "sync"

// Cache blocking of the F32 GEMM, for levels with a gemmBlk kernel.
//
// The micro-kernel reads mr x rows and nr W rows per step of 16 columns
// (10 zmm loads for 24 FMAs at avx512). Unblocked, with rows of 2048 or
// more columns neither operand stays in L1 and both stream from L2 (and
// the first tile of each W panel waits on DRAM): the GEMM ran at 60–75% of
// the kernel's in-L1 speed. f32Blocked keeps the W panel in L1: it cuts
// the columns into blocks of at most gemmKC (nr·gemmKC floats of W fit L1)
// and, for each panel and column block, has the kernel run over all the x
// tiles of a row block (mc rows, kept in L2), resuming each tile's
// accumulators from a scratch buffer and leaving them there until the last
// block, which reduces and stores them. The kernel also prefetches the W
// block that comes next into L2. The lanes sum the same products in the
// same order as the unblocked kernels, so the canonical order (doc.go) and
// batch invariance are unchanged.
var (
	// gemmKC is the most columns per block: the W panel's block (nr·kc
	// floats, 24 KB at avx512) stays in L1 next to the streamed x tile.
	gemmKC = 1024
	// gemmXBytes bounds the x rows of a row block (mc·cols floats), which
	// every W panel of the block reads again: they stay in L2.
	gemmXBytes = 1 << 20
	// gemmMC bounds mc when the columns take more than one block: the
	// scratch holds mc/mr tiles of mr·nr·16 accumulators.
	gemmMC = 64
)

// gemmBlk flags.
const (
	gemmLoad  = 1 // start from the accumulators in acc (else zero)
	gemmFinal = 2 // the last block: reduce into out (else store to acc)
)

// accPool holds accumulator scratch (a *[]float32), one per running f32Blocked.
var accPool sync.Pool

// f32Blocked is f32Rows for levels with gemmBlk (n ≥ mr): the same
// outputs, kernels and canonical order, in a cache-blocked loop order.
func f32Blocked(k *kernels, g *gemmArgs, r0, r1 int) {
	mr, nr := k.mr, k.nr
	nm := g.n - g.n%mr // x rows in full GEMM tiles
	ldo, ldx, ldw, cols := g.ldo, g.ldx, g.ldw, g.k
	out, x, w := g.out, g.x, g.w
	if cols == 0 {
		dotRows(k, g, 0, g.n, r0, r1) // zeros
		return
	}

	// Column blocks: nkb near-equal blocks of kc (a multiple of 16)
	// columns, the last one shorter.
	nkb := (cols + gemmKC - 1) / gemmKC
	if nm == mr {
		nkb = 1 // one tile: no W reuse for the blocks to keep in L1
	}
	kc := ((cols+nkb-1)/nkb + 15) &^ 15
	nkb = (cols + kc - 1) / kc

	// Row blocks: as many x rows as fit gemmXBytes (and the scratch),
	// split evenly.
	mc := max(mr, gemmXBytes/(4*cols))
	if nkb > 1 {
		mc = min(mc, gemmMC)
	}
	mc -= mc % mr
	nib := (nm + mc - 1) / mc
	mc = ((nm+nib-1)/nib + mr - 1) / mr * mr

	var acc []float32
	if nkb > 1 {
		need := mc * nr * 16
		bp, _ := accPool.Get().(*[]float32)
		if bp == nil {
			bp = new([]float32)
		}
		if cap(*bp) < need {
			*bp = make([]float32, need)
		}
		acc = (*bp)[:need]
		defer accPool.Put(bp)
	}

	ch := k.chunk()
	for i0 := 0; i0 < nm; i0 += mc {
		i1 := min(i0+mc, nm)
		for r := r0; r < r1; r += ch {
			re := min(r+ch, r1)
			rr := r
			for ; rr+nr <= re; rr += nr {
				for c0 := 0; c0 < cols; c0 += kc {
					c1 := min(c0+kc, cols)
					kb := c1 - c0
					flags := 0
					if c0 > 0 {
						flags |= gemmLoad
					}
					if c1 == cols {
						flags |= gemmFinal
					}
					// The W block after this one (the next column block,
					// else the next panel's first), which the kernel
					// prefetches into L2.
					pr, pc := rr, c1
					if c1 == cols {
						pr, pc = rr+nr, 0
						if pr+nr > r1 {
							pr = r0
						}
					}
					pf := w[rr*ldw+c0:] // in cache: a no-op
					if p := pr*ldw + pc; nm > mr && p+(nr-1)*ldw+kb <= len(w) {
						pf = w[p:]
					}
					k.gemmBlk(out[i0*ldo+rr:], ldo, x[i0*ldx+c0:], ldx, w[rr*ldw+c0:], ldw, kb, acc, flags, pf, (i1-i0)/mr)
				}
			}
			if i1 < nm {
				continue
			}
			// With the last row block, while the chunk's W rows are
			// still in cache: the rows the panels leave over, and the x
			// rows beyond the last full tile.
			if rr < re {
				dotRows(k, g, 0, nm, rr, re)
			}
			if nm < g.n {
				dotRows(k, g, nm, g.n, r, re)
			}
		}
	}
}
