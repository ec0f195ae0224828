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
// tiles of a row block (mc rows), resuming each tile's accumulators from a
// scratch buffer and leaving them there until the last block, which
// reduces and stores them. The x rows of a row block are packed once
// (packX) into one sequential stream per column block: rows 2,048 floats
// apart otherwise fall into the same L1 sets as each other and as the W
// rows. The panels of a group of gemmNC W rows take turns over each
// column block, so only one column block of x (mc·kc floats) need stay in
// L2 and a row block can hold 128 rows even when a whole row does not
// fit: W, which comes from memory, is read once per row block. The kernel
// prefetches the W block that comes next into L2. The lanes sum the same
// products in the same order as the unblocked kernels, so the canonical
// order (doc.go) and batch invariance are unchanged.
var (
	// gemmKC is the most columns per block: the W panel's block (nr·kc
	// floats, 24 KB at avx512) stays in L1 next to the streamed x tile.
	gemmKC = 1024
	// gemmXBytes bounds the x of a row block that every W panel reads
	// again (mc·cols floats, or mc·kc with column blocks): it stays in L2.
	gemmXBytes = 1 << 20
	// gemmMC bounds mc when the columns take more than one block (the
	// parked accumulators grow with it).
	gemmMC = 128
	// gemmNC is the most W rows (whole chunks) whose panels take turns
	// over a column block of x, and gemmNCWide the same with more than
	// two column blocks; every group reads all of the row block's x
	// again. The group's parked accumulators (gemmNC/nr panels × mc/mr
	// tiles × mr·nr·16 floats: 384 KB at 128 rows, 1.5 MB for the wide)
	// are read a tile at a time, prefetched by the tile before. Measured
	// (n = 128, GFLOP/cpu-s, 48 → 192 rows): 2048×5632 (6 blocks, W from
	// memory) 114 → 121; 2048×2048 (2 blocks, W in L3) 128 → 122. When
	// all of a row block's x fits gemmXBytes, groups are one chunk (the
	// accumulators of 16 rows in L1: 2048×5632, n = 16, 74 → 87).
	gemmNC, gemmNCWide = 48, 192
)

// gemmBlk flags.
const (
	gemmLoad  = 1 // start from the accumulators in acc (else zero)
	gemmFinal = 2 // the last block: reduce into out (else store to acc)
	gemmPf1   = 4 // prefetch one W row per tile over 6 tiles (else 2 over 3)
)

// accPool and xpPool hold scratch buffers (a *[]float32) of the running
// f32Blocked calls: parked accumulators and packed x rows.
var accPool, xpPool sync.Pool

// getScratch returns a buffer of n floats from pool.
func getScratch(pool *sync.Pool, n int) *[]float32 {
	bp, _ := pool.Get().(*[]float32)
	if bp == nil {
		bp = new([]float32)
	}
	if cap(*bp) < n {
		*bp = make([]float32, n)
	}
	*bp = (*bp)[:n]
	return bp
}

// packX copies tiles·4 rows of kb columns of x (ldx apart) into dst in
// gemmBlk's order: per tile, per step of 16 columns, the 16 values of
// each of its 4 rows in turn, a last partial step padded with zeros. The
// kernel then reads its x operand as one sequential stream, which the
// hardware prefetchers follow, instead of 4 rows whose addresses may fall
// in the same L1 sets (ldx a multiple of 1,024 floats).
func packX(dst, x []float32, ldx, tiles, kb int) {
	steps := (kb + 15) / 16
	full := kb / 16
	for t := 0; t < tiles; t++ {
		d := dst[t*steps*64 : (t+1)*steps*64]
		for r := 0; r < 4; r++ {
			row := x[(4*t+r)*ldx : (4*t+r)*ldx+kb]
			for s := 0; s < full; s++ {
				*(*[16]float32)(d[s*64+r*16:]) = *(*[16]float32)(row[s*16:])
			}
			if full < steps {
				tail := d[full*64+r*16 : full*64+r*16+16]
				n := copy(tail, row[full*16:])
				clear(tail[n:])
			}
		}
	}
}

// gemmPlan is the blocking of one F32 GEMM (levels with gemmBlk, n ≥ mr):
// nm x rows in full tiles, in row blocks of mc (the last one shorter);
// columns in nkb blocks of kc (a multiple of 16; the last one shorter).
type gemmPlan struct {
	nm, mc, nkb, kc int
}

func (k *kernels) gemmPlan(n, cols int) gemmPlan {
	mr := k.mr
	nm := n - n%mr
	// Column blocks: nkb near-equal blocks.
	nkb := (cols + gemmKC - 1) / gemmKC
	if nm == mr {
		nkb = 1 // one tile: no W reuse for the blocks to keep in L1
	}
	kc := ((cols+nkb-1)/nkb + 15) &^ 15
	nkb = (cols + kc - 1) / kc

	// Row blocks: one column block (all of x when nkb is 1) must stay
	// in L2: at most gemmXBytes of x, and gemmMC rows with column blocks.
	mc := max(mr, gemmXBytes/(4*cols))
	if nkb > 1 {
		mc = max(mr, min(gemmXBytes/(4*kc), gemmMC))
	}
	mc -= mc % mr
	nib := (nm + mc - 1) / mc
	mc = ((nm+nib-1)/nib + mr - 1) / mr * mr
	return gemmPlan{nm: nm, mc: mc, nkb: nkb, kc: kc}
}

// xpLen is the length of the packed x of all nm rows: row block i0 from
// i0·nkb·kc, its column block c0 (tiles·mr rows of at most kc columns,
// packX's order) c0·tiles·mr further on.
func (pl gemmPlan) xpLen() int { return pl.nm * pl.nkb * pl.kc }

// nc is the W rows of a group: whole chunks (see kernels.chunk). When
// all of a row block's x fits gemmXBytes it stays in L2 across groups,
// and groups of one chunk keep the parked accumulators nearest.
func (pl gemmPlan) nc(k *kernels) int {
	nc := gemmNC
	if pl.nkb > 2 {
		nc = gemmNCWide
	}
	if 4*pl.mc*pl.nkb*pl.kc <= gemmXBytes {
		nc = 0
	}
	ch := k.chunk()
	return max(ch, nc/ch*ch)
}

// accLen is the length of the parked accumulators of one f32Blocked call
// with more than one column block: a group's panels × a row block's tiles.
func (pl gemmPlan) accLen(k *kernels) int { return pl.nc(k) / k.nr * pl.mc * k.nr * 16 }

// packTiles packs x tiles [t0,t1) (rows 4t..4t+3, mr = 4) for the plan.
func (pl gemmPlan) packTiles(k *kernels, xp, x []float32, ldx, cols, t0, t1 int) {
	pack := packX
	if k.packX != nil {
		pack = k.packX
	}
	for t := t0; t < t1; {
		i0 := 4 * t / pl.mc * pl.mc // the tile's row block
		nt := (min(i0+pl.mc, pl.nm) - i0) / 4
		tb := i0 / 4 // the block's first tile
		te := min(t1, tb+nt)
		for c0 := 0; c0 < cols; c0 += pl.kc {
			kb := min(pl.kc, cols-c0)
			steps := (kb + 15) / 16
			base := i0*pl.nkb*pl.kc + c0*nt*4
			pack(xp[base+(t-tb)*steps*64:], x[4*t*ldx+c0:], ldx, te-t, kb)
		}
		t = te
	}
}

// f32Blocked is f32Rows for levels with gemmBlk (n ≥ mr): the same
// outputs, kernels and canonical order, in a cache-blocked loop order, x
// packed for the plan pl in xp.
//
// Loops, outermost first: row blocks of mc x rows; groups of gemmNC W
// rows; column blocks; the group's panels of nr W rows; the row block's x
// tiles (in the kernel). A W panel's column block stays in L1 while every
// tile of the row block passes over it, the column block of packed x
// (mc·kc floats) stays in L2, and each W element comes from memory once
// per row block.
//
// acc (nil: taken from accPool) holds the parked accumulators, at least
// pl.accLen(k) floats when there is more than one column block.
func f32Blocked(k *kernels, g *gemmArgs, pl gemmPlan, xp, acc []float32, r0, r1 int) {
	mr, nr := k.mr, k.nr
	ldo, ldw, cols := g.ldo, g.ldw, g.k
	out, w := g.out, g.w
	nm, mc, nkb, kc := pl.nm, pl.mc, pl.nkb, pl.kc
	nc := pl.nc(k)
	if nkb == 1 {
		acc = nil
	} else if acc == nil {
		bp := getScratch(&accPool, pl.accLen(k))
		acc = *bp
		defer accPool.Put(bp)
	}

	for i0 := 0; i0 < nm; i0 += mc {
		i1 := min(i0+mc, nm)
		nt := (i1 - i0) / mr
		xr := xp[i0*nkb*kc:]
		for m0 := r0; m0 < r1; m0 += nc {
			m1 := min(m0+nc, r1)
			np := (m1 - m0) / nr // panels; only the last group has rows left over
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
				if nt >= 6 {
					flags |= gemmPf1
				}
				xb := xr[c0*nt*mr:]
				for p := 0; p < np; p++ {
					rr := m0 + p*nr
					// The W block of the next call, which the kernel
					// prefetches into L2: the next panel's, else the
					// group's first of the next column block, else the
					// next group's first.
					pr, pc := rr+nr, c0
					if p+1 == np {
						pr, pc = m0, c1
						if c1 == cols {
							pr, pc = m1, 0
						}
					}
					pf := w[rr*ldw+c0:] // in cache: a no-op
					if q := pr*ldw + pc; nm > mr && pr+nr <= r1 && q+(nr-1)*ldw+kb <= len(w) {
						pf = w[q:]
					}
					var a []float32
					if acc != nil {
						a = acc[p*nt*mr*nr*16:]
					}
					k.gemmBlk(out[i0*ldo+rr:], ldo, xb, w[rr*ldw+c0:], ldw, kb, a, flags, pf, nt)
				}
			}
			if i1 < nm {
				continue
			}
			// With the last row block, while the group's W rows are
			// still in cache: the rows the panels leave over, and the x
			// rows beyond the last full tile.
			if rr := m0 + np*nr; rr < m1 {
				dotRows(k, g, 0, nm, rr, m1)
			}
			if nm < g.n {
				dotRows(k, g, nm, g.n, m0, m1)
			}
		}
	}
}
