package tensor

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Packed F32 weights (PackF32) and their outer-product kernels.
//
// The row-major F32 kernels (gemm.go) keep one 16-lane accumulator per
// output and reduce it at the end of each tile: every step loads as many
// zmm of x as of W, and the reductions cost a tenth of a tile's time. A
// packed matrix stores W in panels of f32pNR = 32 rows, each panel column
// by column (the 32 weights of column c of the panel's rows, then column
// c+1, …; the last panel padded with zero rows), so that one step of an
// outer-product kernel loads two zmm of W (the panel's column c) and
// broadcasts one x value per activation row into 2 FMAs: a tile of 14 x
// rows × 32 W rows holds 28 accumulators, each of which is one output's
// running sum, with no reduction and 16 loads per 28 FMAs (the row-major
// kernel: 10 zmm loads per 24 FMAs). The x rows are packed per tile the
// same way (the tile's mr values of column c, then column c+1).
//
// # Canonical order
//
// A packed output is a running sum over the columns in order:
//
//	acc = 0; for c ascending: acc += x[c]·w[c]
//
// the avx512 level fusing each multiply-add (one rounding), the levels
// without packed kernels (go and avx2, which run packed matrices in Go:
// f32pGo) rounding the product first: at the go level, packed and
// row-major results are the same bits. Column
// blocks park the running sums in out and resume them (exact), so an
// output's bits depend only on its x row and W row, never on n, the tile,
// the blocking or the thread. The avx512 packed sums differ from the
// row-major avx512 ones (another order) in the last bits, not in accuracy.
const (
	f32pNR = 32 // W rows per panel
	f32pMR = 14 // x rows per GEMM tile (28 accumulators of 32)
)

// Cache blocking of the packed GEMM (variables for the tests).
var (
	// f32pKC is the most columns per block: the tile's packed x (14·kc
	// floats) and the panel's block of W (32·kc) stay in L2 while the
	// kernel runs over every tile of a row block.
	f32pKC = 1024
	// f32pXBytes bounds the packed x of a row block and column block,
	// which every panel reads again: it stays in L2.
	f32pXBytes = 1 << 20
)

// f32pFunc is an outer-product kernel: the mr×(16·nz) outputs at out (ldo
// apart) of the packed x tile xp (mr floats per column) against nz/2
// panels from w (ps floats apart), over k columns, starting from zero or
// (flags&1) from out. mask selects the outputs of the two halves of the
// one panel of nz = 2 (bits 0–15, 16–31). Each column step also
// prefetches into L2 the line at pf, which advances pfs bytes per step.
type f32pFunc func(out *float32, ldo int, xp, w *float32, ps, k, flags, mask int, pf *float32, pfs int)

// f32pPanelFloats is the size of one packed panel of cols columns.
func f32pPanelFloats(cols int) int { return f32pNR * cols }

// f32PackedLen is the size of the packed form of a rows×cols matrix.
func f32PackedLen(rows, cols int) int {
	return (rows + f32pNR - 1) / f32pNR * f32pPanelFloats(cols)
}

// PackF32 repacks an F32 matrix into the panel layout of the
// outer-product kernels, in new memory: w.P32 gets it and w.F32 is
// released (another Mat sharing F32, such as the token embeddings of a
// tied head, keeps its rows). It does nothing to other or already packed
// matrices, or at a kernel level without packed F32 kernels (avx2, go).
// Results stay within float32 rounding of the row-major MatMul but are not
// bit-identical to it at avx512.
func PackF32(w *Mat) {
	if !packableF32(w) {
		return
	}
	w.P32 = packF32(w.F32, w.Rows, w.Cols)
	w.F32 = nil
}

// PackF32InPlace is PackF32 reusing w.F32's memory (when Rows is a
// multiple of 32, else it packs into new memory): no other Mat may share
// it. Loading a model so needs no second copy of its weights.
func PackF32InPlace(w *Mat) {
	if !packableF32(w) {
		return
	}
	if w.Rows%f32pNR != 0 {
		PackF32(w)
		return
	}
	n := w.Rows * w.Cols
	packF32Into(w.F32[:n:n], w.F32[:n], w.Rows, w.Cols)
	w.P32, w.F32 = w.F32[:n:n], nil
}

func packableF32(w *Mat) bool {
	if w.Type != F32 || w.P32 != nil || impl.f32p == nil {
		return false
	}
	if len(w.F32) < w.Rows*w.Cols {
		panic("tensor: PackF32: F32 weights shorter than Rows×Cols")
	}
	return true
}

// UnpackF32 converts a packed F32 matrix back to rows in place (w.F32
// gets them, w.P32 is released); it does nothing to other matrices.
func UnpackF32(w *Mat) {
	if w.Type != F32 || w.P32 == nil {
		return
	}
	checkPackedF32(w)
	f := make([]float32, w.Rows*w.Cols)
	for r := 0; r < w.Rows; r++ {
		p := w.P32[r/f32pNR*f32pPanelFloats(w.Cols)+r%f32pNR:]
		for c := range w.Cols {
			f[r*w.Cols+c] = p[c*f32pNR]
		}
	}
	w.F32, w.P32 = f, nil
}

// packF32 returns the packed form of the rows×cols row-major f.
func packF32(f []float32, rows, cols int) []float32 {
	p := alignedFloats(f32PackedLen(rows, cols))
	packF32Into(p, f, rows, cols)
	return p
}

// packF32Into writes the packed form of the rows×cols row-major f into p
// (f32PackedLen floats), which may be f itself: a panel's packed floats
// take the place of its 32 rows. The panels are shared out among
// GOMAXPROCS goroutines, each transposing (with the x packing kernel)
// through a panel-sized buffer.
func packF32Into(p, f []float32, rows, cols int) {
	panels := (rows + f32pNR - 1) / f32pNR
	pf := f32pPanelFloats(cols)
	workers := max(1, min(runtime.GOMAXPROCS(0), panels, rows*cols>>18))
	pack := impl.f32pPack
	if pack == nil {
		pack = packXCols
	}
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Go(func() {
			tmp := make([]float32, pf)
			for q := wk * panels / workers; q < (wk+1)*panels/workers; q++ {
				n := min(f32pNR, rows-q*f32pNR) * cols
				copy(tmp[:n], f[q*pf:q*pf+n])
				clear(tmp[n:])
				// Two halves of 16 rows, each column's 16 floats 32 apart.
				dst := p[q*pf : (q+1)*pf]
				pack(dst, tmp, cols, 16, cols, f32pNR)
				pack(dst[16:], tmp[16*cols:], cols, 16, cols, f32pNR)
			}
		})
	}
	wg.Wait()
}

// alignedFloats returns n zeroed floats starting on a 64-byte boundary.
func alignedFloats(n int) []float32 {
	b := alignedBytes(4*n, 64)
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

func checkPackedF32(w *Mat) {
	if len(w.P32) < f32PackedLen(w.Rows, w.Cols) {
		panic(fmt.Sprintf("tensor: packed F32 matrix %d×%d holds %d floats, want %d",
			w.Rows, w.Cols, len(w.P32), f32PackedLen(w.Rows, w.Cols)))
	}
}

// f32pWide is the zmm columns of the kernel a lone tile of mr rows (n <
// f32pMR: decode) runs: the most whose accumulators fit, so that enough
// independent sums hide the FMA latency.
func f32pWide(mr int) int {
	switch {
	case mr == 1:
		return 16
	case mr <= 2:
		return 8
	case mr <= 6:
		return 4
	}
	return 2
}

// f32pArgs is one packed F32 MatMul: out[i·ldo+r] = Σ_c x[i·cols+c]·W[r][c]
// for i < n, x packed into xp by tiles (see f32pPlan).
type f32pArgs struct {
	out  []float32
	ldo  int
	x    []float32
	n    int
	w    *Mat
	xp   []float32
	kc   int // columns per block
	tpb  int // tiles per row block
	kern func(out []float32, ldo int, xp []float32, mr int, w []float32, ps, nz, k, flags, valid int, pf []float32, pfs int)
	pack func(dst, x []float32, ldx, mr, kb, ldd int)
}

// plan sets the blocking: column blocks of at most f32pKC (near-equal,
// so that no block is tiny) and row blocks whose packed x column block
// fits f32pXBytes. A lone tile (n < f32pMR) takes all columns at once.
func (a *f32pArgs) plan() {
	cols := a.w.Cols
	a.kc, a.tpb = cols, 1
	if a.n < f32pMR {
		return
	}
	nkb := (cols + f32pKC - 1) / f32pKC
	a.kc = (cols + nkb - 1) / nkb
	a.tpb = max(1, f32pXBytes/(4*f32pMR*a.kc))
}

// tiles is the number of x tiles: as few as hold f32pMR rows at most,
// of near-equal sizes (rows tileRow(t) to tileRow(t+1)), so that no tile
// is left with too few rows to keep the FMAs busy.
func (a *f32pArgs) tiles() int { return (a.n + f32pMR - 1) / f32pMR }

// tileRow is the first x row of tile t.
func (a *f32pArgs) tileRow(t int) int { return t * a.n / a.tiles() }

// xpOff is where tile t's packed columns [c0, c0+kb) start: column
// blocks one after another (n·kb floats each), tiles within a block
// (their rows·kb floats each).
func (a *f32pArgs) xpOff(t, c0, kb int) int { return a.n*c0 + a.tileRow(t)*kb }

// packTiles packs the x rows of tiles [t0, t1) for every column block.
func (a *f32pArgs) packTiles(t0, t1 int) {
	cols := a.w.Cols
	for c0 := 0; c0 < cols; c0 += a.kc {
		kb := min(a.kc, cols-c0)
		for t := t0; t < t1; t++ {
			i0 := a.tileRow(t)
			mr := a.tileRow(t+1) - i0
			a.pack(a.xp[a.xpOff(t, c0, kb):a.xpOff(t, c0, kb)+mr*kb], a.x[i0*cols+c0:], cols, mr, kb, mr)
		}
	}
}

// packXCols writes dst[c·ldd+i] = x[i·ldx+c] for i < mr ≤ ldd, c < kb.
func packXCols(dst, x []float32, ldx, mr, kb, ldd int) {
	if mr <= 0 || kb <= 0 {
		return
	}
	dst = dst[:(kb-1)*ldd+mr]
	for i := 0; i < mr; i++ {
		row := x[i*ldx : i*ldx+kb]
		for c, v := range row {
			dst[c*ldd+i] = v
		}
	}
}

// panels computes the outputs of W panels [p0, p1).
func (a *f32pArgs) panels(p0, p1 int) {
	w := a.w
	cols, rows := w.Cols, w.Rows
	ps := f32pPanelFloats(cols)
	if a.n < f32pMR {
		// One tile of all n rows: wide kernels over several panels,
		// columns unblocked.
		mr := a.n
		xp := a.x
		if mr > 1 {
			xp = a.xp
		}
		nz := f32pWide(mr)
		p := p0
		for ; nz > 2 && p+nz/2 <= p1 && (p+nz/2)*f32pNR <= rows; p += nz / 2 {
			wp := w.P32[p*ps:]
			a.kern(a.out[p*f32pNR:], a.ldo, xp, mr, wp, ps, nz, cols, 0, nz*16, wp, 0)
		}
		for ; p < p1; p++ {
			wp := w.P32[p*ps:]
			a.kern(a.out[p*f32pNR:], a.ldo, xp, mr, wp, ps, 2, cols, 0, min(f32pNR, rows-p*f32pNR), wp, 0)
		}
		return
	}
	nt := a.tiles()
	for t0 := 0; t0 < nt; t0 += a.tpb {
		t1 := min(t0+a.tpb, nt)
		for c0 := 0; c0 < cols; c0 += a.kc {
			kb := min(a.kc, cols-c0)
			flags := 0
			if c0 > 0 {
				flags = 1
			}
			for p := p0; p < p1; p++ {
				wp := w.P32[p*ps+c0*f32pNR:]
				valid := min(f32pNR, rows-p*f32pNR)
				// The W block the next call reads, which this panel's
				// tiles prefetch into L2 in equal shares: the next
				// panel's, else the first panel's of the next column
				// block or row block.
				np, nc := p+1, c0
				if np == p1 {
					np, nc = p0, c0+kb
					if nc >= cols {
						nc = 0
						if t1 == nt {
							np = -1
						}
					}
				}
				var next []float32
				if np >= 0 {
					nkb := min(a.kc, cols-nc)
					next = w.P32[np*ps+nc*f32pNR : np*ps+(nc+nkb)*f32pNR]
				}
				share := (len(next) + t1 - t0 - 1) / (t1 - t0)
				for t := t0; t < t1; t++ {
					i0 := a.tileRow(t)
					pf, pfs := wp, 0
					if s := (t - t0) * share; s < len(next) {
						pf, pfs = next[s:], 4*((share+kb-1)/kb)
					}
					a.kern(a.out[i0*a.ldo+p*f32pNR:], a.ldo, a.xp[a.xpOff(t, c0, kb):], a.tileRow(t+1)-i0, wp, ps, 2, kb, flags, valid, pf, pfs)
				}
			}
		}
	}
}

// f32pGo is the portable packed kernel (of the levels without one): the
// outputs of an mr-row tile against nz/2 panels over k columns, only the
// first valid outputs of the row, in the go level's canonical order (the
// running sum of products rounded to float32).
func f32pGo(out []float32, ldo int, xp []float32, mr int, w []float32, ps, nz, k, flags, valid int, _ []float32, _ int) {
	for i := 0; i < mr; i++ {
		for j := 0; j < min(valid, nz*16); j++ {
			wj := w[j/f32pNR*ps+j%f32pNR:]
			var s float32
			if flags&1 != 0 {
				s = out[i*ldo+j]
			}
			for c := 0; c < k; c++ {
				s += float32(xp[c*mr+i] * wj[c*f32pNR])
			}
			out[i*ldo+j] = s
		}
	}
}

// matMulF32P is MatMul for a packed F32 matrix.
func (p *Pool) matMulF32P(out, x []float32, n int, w *Mat) {
	checkPackedF32(w)
	j := p.job()
	j.k, j.w = impl, w
	a := &j.fp
	*a = f32pArgs{out: out, ldo: w.Rows, x: x, n: n, w: w, kern: impl.f32p, pack: impl.f32pPack}
	if a.kern == nil {
		a.kern = f32pGo
	}
	if a.pack == nil {
		a.pack = packXCols
	}
	if w.Cols == 0 {
		for i := 0; i < n; i++ {
			clear(out[i*w.Rows : (i+1)*w.Rows])
		}
		p.doneJob()
		return
	}
	a.plan()
	if n > 1 {
		a.xp = p.f32Scratch(n * w.Cols)
		var fn func(lo, hi int)
		if p != nil {
			fn = p.f32pPackFn
		}
		p.run(n*w.Cols*4, a.tiles(), fn, a.packTiles)
	}
	var fn func(lo, hi int)
	if p != nil {
		fn = p.f32pFn
	}
	p.run(n*w.Rows*w.Cols, (w.Rows+f32pNR-1)/f32pNR, fn, a.panels)
	p.doneJob()
}
