package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
)

// parMinWork is the multiply-add count (n·Rows·Cols) below which MatMul runs
// on the caller alone: under it the hand-off to the workers costs more than
// it saves.
const parMinWork = 1 << 16

// MatMul computes out[i][r] = Σ_c x[i][c]·w[r][c] for n rows of x
// (x is n×w.Cols, out is n×w.Rows), splitting output rows over the pool.
//
// Q8_0 weights: the rows of x are first quantized to Q8_0 (as llama.cpp
// does), then each output is a sum of int8·int8 block dot products scaled by
// both blocks' scales. w.Cols must be a multiple of 32 for Q8_0. Q4_0
// weights likewise (the weights q−8 of their nibbles q); packed (PackQ4)
// they give the bits of packed Q8_0, in GGML blocks they run a slow Go
// loop in the go level's canonical order.
func (p *Pool) MatMul(out, x []float32, n int, w *Mat) {
	if n <= 0 || w.Rows == 0 {
		return
	}
	if len(x) < n*w.Cols || len(out) < n*w.Rows {
		panic(fmt.Sprintf("tensor: MatMul: x has %d floats, out %d; need %d×%d and %d×%d",
			len(x), len(out), n, w.Cols, n, w.Rows))
	}
	switch w.Type {
	case F32:
		if w.P32 != nil {
			p.matMulF32P(out, x, n, w)
			return
		}
		if len(w.F32) < w.Rows*w.Cols {
			panic("tensor: MatMul: F32 weights shorter than Rows×Cols")
		}
		p.matMulF32(out, x, n, w)
	case Q8_0:
		if w.P != nil {
			checkPacked(w)
			p.matMulQ8P(out, x, n, w)
			return
		}
		if w.Cols%Q8BlockSize != 0 || len(w.Q) < w.Rows*Q8RowBytes(w.Cols) {
			panic("tensor: MatMul: Q8_0 weights need Cols%32 == 0 and Rows×Cols/32 blocks")
		}
		p.matMulQ8(out, x, n, w)
	case Q4_0:
		if w.P != nil {
			checkPacked(w)
			p.matMulQ8P(out, x, n, w)
			return
		}
		checkQ4(w, "MatMul")
		p.matMulQ4(out, x, n, w)
	case Stacked:
		p.matMulStacked(out, x, n, w)
	default:
		c := CodecOf(w.Type)
		if c == nil || c.unpack == nil {
			panic(fmt.Sprintf("tensor: MatMul: unknown DType %d", w.Type))
		}
		p.matMulBlocks(out, x, n, w, c)
	}
}

// mmJob is one MatMul call's work, split by output-row panels. A Pool keeps
// one, with its methods bound once as func values (f32Fn, packFn, quantFn,
// q8Fn, f32pFn, f32pPackFn), so that a MatMul allocates nothing.
type mmJob struct {
	k     *kernels
	w     *Mat
	panel int
	g     gemmArgs // F32: the whole product
	fp    f32pArgs // packed F32

	// Q8_0: the quantized activations.
	x          []float32
	out        []float32
	n          int
	xq         []int8
	xd         []float32
	xu         []byte
	n4         int // activation rows handled four at a time by q8gemm
	rows, cols int
	nb, ldw    int

	// Packed Q8_0 (Mat.P): the activations' scale pairs, their step
	// corrections (Q8_0 only) and the product.
	xs []uint32
	xc []int32
	pk q8pArgs
}

// run calls fn over [0,units), on the pool's workers when the work is big
// enough to pay for the hand-off, else on the caller.
func (p *Pool) run(work, units int, fn func(lo, hi int), inline func(lo, hi int)) {
	if work < parMinWork || p.Threads() == 1 {
		inline(0, units)
		return
	}
	p.ParallelFor(units, fn)
}

// job returns the Pool's job (reset) or, for a nil Pool, a fresh one.
func (p *Pool) job() *mmJob {
	if p == nil {
		return new(mmJob)
	}
	p.mm = mmJob{}
	return &p.mm
}

func (p *Pool) matMulF32(out, x []float32, n int, w *Mat) {
	j := p.job()
	j.k, j.w = impl, w
	j.panel = j.k.mvRows()
	if n >= j.k.mr {
		j.panel = j.k.chunk()
	}
	j.g = gemmArgs{out: out, ldo: w.Rows, x: x, ldx: w.Cols, n: n, w: w.F32, ldw: w.Cols, k: w.Cols}
	if n >= j.k.mr && j.k.gemmBlk != nil && w.Cols > 0 {
		// Pack x for the GEMM once, over the pool, rather than in each
		// thread's f32Blocked.
		j.g.pl = j.k.gemmPlan(n, w.Cols)
		j.g.xp = p.f32Scratch(j.g.pl.xpLen())
		if j.g.pl.nkb > 1 && p != nil {
			j.g.accs = p.accScratch(j.g.pl.accLen(j.k))
		}
		var fn func(lo, hi int)
		if p != nil {
			fn = p.packFn
		}
		p.run(n*w.Cols, j.g.pl.nm/j.k.mr, fn, j.packTiles)
	}
	panels := (w.Rows + j.panel - 1) / j.panel
	var fn func(lo, hi int)
	if p != nil {
		fn = p.f32Fn
	}
	p.run(n*w.Rows*w.Cols, panels, fn, j.f32Panels)
	p.doneJob()
}

// doneJob drops the job's references to the caller's slices.
func (p *Pool) doneJob() {
	if p != nil {
		p.mm = mmJob{}
	}
}

// packTiles packs x tiles [lo,hi) for the GEMM.
func (j *mmJob) packTiles(lo, hi int) {
	j.g.pl.packTiles(j.k, j.g.xp, j.g.x, j.g.ldx, j.g.k, lo, hi)
}

// f32Scratch returns a buffer for the packed x of an F32 GEMM, reused
// across calls: as large as the largest x multiplied (plus column
// padding), like the Q8_0 activation scratch.
func (p *Pool) f32Scratch(n int) []float32 {
	if p == nil {
		return make([]float32, n)
	}
	return grow(&p.xf, n)
}

// grow returns (*buf)[:n], first replacing *buf by a larger buffer if it
// holds fewer than n: the Pool's scratch, reused across calls (the pool has
// one caller at a time).
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	return (*buf)[:n]
}

// accScratch returns one accumulator buffer of n floats per thread,
// reused across calls.
func (p *Pool) accScratch(n int) [][]float32 {
	if len(p.accs) < p.Threads() {
		p.accs = make([][]float32, p.Threads())
	}
	for i := range p.accs {
		grow(&p.accs[i], n)
	}
	return p.accs
}

func (j *mmJob) f32Panels(lo, hi int) {
	f32Rows(j.k, &j.g, lo*j.panel, min(hi*j.panel, j.w.Rows))
}

// gemmArgs describes out[i·ldo+r] = Σ_{t<k} x[i·ldx+t]·w[r·ldw+t] for i < n.
type gemmArgs struct {
	out    []float32
	ldo    int
	x      []float32
	ldx, n int
	w      []float32
	ldw, k int

	// xp, when set, holds x packed for the GEMM (gemmBlk) by plan pl;
	// accs, when set, accumulator scratch for each f32Rows call of the
	// MatMul (one per thread), handed out by accNext.
	xp      []float32
	pl      gemmPlan
	accs    [][]float32
	accNext atomic.Int32
}

// mvRows is the number of W rows the level's widest matvec kernel takes.
func (k *kernels) mvRows() int {
	if k.mv8 != nil {
		return 8
	}
	return 4
}

// chunk is the number of W rows f32Rows works through at a time when the
// GEMM kernel runs: a multiple of both nr and mvRows, so that the rows of a
// chunk beyond its GEMM panels and the leftover x rows still get the
// widest matvec kernel.
func (k *kernels) chunk() int {
	a, b := k.nr, k.mvRows()
	for b != 0 {
		a, b = b, a%b
	}
	return k.nr * k.mvRows() / a
}

// f32Rows computes output columns [r0,r1) of all n rows.
//
// Every output goes through one of the level's F32 kernels (gemm, mv8, mv4,
// dot1), which all sum in the level's canonical order, plus (vl > 1) the
// same Go tail sum, so out[i][r] is bit-identical whatever n, the position
// of row i or r within a tile, or the split of [r0,r1) between threads.
func f32Rows(k *kernels, g *gemmArgs, r0, r1 int) {
	mr, nr := k.mr, k.nr
	nm := g.n - g.n%mr // x rows in full GEMM tiles
	if nm == 0 {
		dotRows(k, g, 0, g.n, r0, r1)
		return
	}
	if k.gemmBlk != nil {
		if g.k == 0 {
			dotRows(k, g, 0, g.n, r0, r1) // zeros
			return
		}
		if g.xp == nil { // not packed by MatMul: pack here
			pl := k.gemmPlan(g.n, g.k)
			bp := getScratch(&xpPool, pl.xpLen())
			defer xpPool.Put(bp)
			pl.packTiles(k, *bp, g.x, g.ldx, g.k, 0, pl.nm/mr)
			f32Blocked(k, g, pl, *bp, nil, r0, r1)
			return
		}
		var acc []float32
		if g.accs != nil {
			acc = g.accs[g.accNext.Add(1)-1]
		}
		f32Blocked(k, g, g.pl, g.xp, acc, r0, r1)
		return
	}
	ldo, ldx, ldw, cols := g.ldo, g.ldx, g.ldw, g.k
	out, x, w := g.out, g.x, g.w
	kv := cols &^ (k.vl - 1)
	ch := k.chunk()
	for r := r0; r < r1; r += ch {
		re := min(r+ch, r1)
		rr := r
		for ; rr+nr <= re; rr += nr {
			wp := w[rr*ldw : (rr+nr-1)*ldw+cols]
			for i := 0; i < nm; i += mr {
				o := out[i*ldo+rr:]
				xs := x[i*ldx : (i+mr-1)*ldx+cols]
				k.gemm(o, ldo, xs, ldx, wp, ldw, kv)
				if kv < cols {
					addTail(o, ldo, xs, ldx, wp, ldw, mr, nr, kv, cols)
				}
			}
		}
		if rr < re {
			dotRows(k, g, 0, nm, rr, re)
		}
		if nm < g.n {
			dotRows(k, g, nm, g.n, r, re)
		}
	}
}

// dotRows computes outputs [r0,r1) of x rows [i0,i1) with the matvec
// kernels: eight W rows at a time (each block reused by every x row while
// it is in L1), then four, then one.
func dotRows(k *kernels, g *gemmArgs, i0, i1, r0, r1 int) {
	ldo, ldx, ldw, cols := g.ldo, g.ldx, g.ldw, g.k
	out, x, w := g.out, g.x, g.w
	kv := cols &^ (k.vl - 1)
	r := r0
	if k.mv8 != nil {
		for ; r+8 <= r1; r += 8 {
			wp := w[r*ldw : (r+7)*ldw+cols]
			for i := i0; i < i1; i++ {
				k.mv8(out[i*ldo+r:i*ldo+r+8], x[i*ldx:i*ldx+cols], wp, ldw, kv)
			}
		}
	}
	for ; r+4 <= r1; r += 4 {
		wp := w[r*ldw : (r+3)*ldw+cols]
		for i := i0; i < i1; i++ {
			k.mv4(out[i*ldo+r:i*ldo+r+4], x[i*ldx:i*ldx+cols], wp, ldw, kv)
		}
	}
	for ; r < r1; r++ {
		wr := w[r*ldw : r*ldw+cols]
		for i := i0; i < i1; i++ {
			out[i*ldo+r] = k.dot1(x[i*ldx:i*ldx+cols], wr, kv)
		}
	}
	if kv < cols {
		for i := i0; i < i1; i++ {
			addTail(out[i*ldo+r0:], 0, x[i*ldx:], 0, w[r0*ldw:], ldw, 1, r1-r0, kv, cols)
		}
	}
}

// scoresRows and scoresCols bound the products MatMulStrided gives the
// level's scores kernel (an attention tile against one KV-cache block);
// larger ones go through the GEMM.
const scoresRows, scoresCols = 8, 16

// MatMulStrided writes out[i·ldo+j] = Σ_{t<k} x[i·ldx+t]·w[j·ldw+t] for
// i < n, j < m, on the calling goroutine: n rows of x against m rows of w,
// each k long, at any row strides. It runs MatMul's register-blocked F32
// kernels, e.g. for the attention scores of several queries of a sequence
// against a block of KV-cache slots (w = the slots, ldw = their stride).
// The strides must not be negative (it panics).
func MatMulStrided(out []float32, ldo int, x []float32, ldx, n int, w []float32, ldw, m, k int) {
	if n <= 0 || m <= 0 {
		return
	}
	if ldo < 0 || ldx < 0 || ldw < 0 {
		panic(fmt.Sprintf("tensor: MatMulStrided: negative stride (ldo %d, ldx %d, ldw %d)", ldo, ldx, ldw))
	}
	if k <= 0 {
		for i := 0; i < n; i++ {
			clear(out[i*ldo : i*ldo+m])
		}
		return
	}
	_, _, _ = out[(n-1)*ldo+m-1], x[(n-1)*ldx+k-1], w[(m-1)*ldw+k-1]
	if impl.scores != nil && n <= scoresRows && m <= scoresCols {
		impl.scores(&out[0], ldo, &x[0], ldx, n, &w[0], ldw, m, k, 1)
		return
	}
	g := gemmArgs{out: out, ldo: ldo, x: x, ldx: ldx, n: n, w: w, ldw: ldw, k: k}
	f32Rows(impl, &g, 0, m)
}

// ScoresBlocks writes the scaled scores of n query rows (x, ldx apart,
// each k long) against np keys stored in blocks of bs, as an attention
// tile needs them: key p is k floats at w[bt[p/bs]·blk + (p%bs)·ldw],
// and out[i·ldo+p] gets (Σ_t x[i·ldx+t]·key_p[t])·scale, with the bits
// of MatMulStrided per block then Scale (for k ≥ 16, those of DotStrided
// for row i then Scale; below, DotStrided runs Dot). Where the level has
// a scores kernel, one kernel call per block (per 16 keys of a larger
// one) does both, for any n. bs must be positive, and blk and the
// strides not negative (it panics).
func ScoresBlocks(out []float32, ldo int, x []float32, ldx, n int, w []float32, bt []int32, blk, ldw, bs, np, k int, scale float32) {
	if n <= 0 || np <= 0 {
		return
	}
	if bs <= 0 || blk < 0 || ldo < 0 || ldx < 0 || ldw < 0 {
		panic(fmt.Sprintf("tensor: ScoresBlocks: block size %d, block stride %d, strides %d, %d, %d", bs, blk, ldo, ldx, ldw))
	}
	nb := (np + bs - 1) / bs
	if len(bt) < nb {
		panic(fmt.Sprintf("tensor: ScoresBlocks: %d positions need %d blocks, the table has %d", np, nb, len(bt)))
	}
	bt = bt[:nb]
	if impl.scores == nil || k <= 0 {
		for b, p := 0, 0; p < np; b, p = b+1, p+bs {
			MatMulStrided(out[p:], ldo, x, ldx, n, w[int(bt[b])*blk:], ldw, min(bs, np-p), k)
		}
		for i := range n {
			Scale(out[i*ldo:i*ldo+np], scale)
		}
		return
	}
	_, _ = out[(n-1)*ldo+np-1], x[(n-1)*ldx+k-1]
	for b, p := 0, 0; p < np; b, p = b+1, p+bs {
		m := min(bs, np-p)
		o := int(bt[b]) * blk
		_ = w[o+(m-1)*ldw+k-1] // and &w[o] below: o ≥ 0
		// Up to 16 keys a call, which stay in L1 while every four rows
		// of x pass over them.
		for j := 0; j < m; j += scoresCols {
			impl.scores(&out[p+j], ldo, &x[0], ldx, n, &w[o+j*ldw], ldw, min(scoresCols, m-j), k, scale)
		}
	}
}

// DotStrided writes out[p] = Σ_t q[t]·k[p·stride+t] (t < len(q)) for
// p < len(out): one query's scores against len(out) keys stored stride
// floats apart (e.g. consecutive KV-cache slots of one head). One call
// replaces len(out) Dot calls and reads four keys per kernel step. A
// negative stride panics.
func DotStrided(out, q, k []float32, stride int) {
	if len(out) == 0 {
		return
	}
	if stride < 0 {
		panic(fmt.Sprintf("tensor: DotStrided: negative stride %d", stride))
	}
	if len(q) == 0 {
		clear(out)
		return
	}
	if len(q) < shortVec {
		for p := range out {
			out[p] = Dot(q, k[p*stride:p*stride+len(q)])
		}
		return
	}
	g := gemmArgs{out: out, x: q, n: 1, w: k, ldw: stride, k: len(q)}
	dotRows(impl, &g, 0, 1, 0, len(out))
}

// AxpyStrided adds Σ_p a[p]·v[p·stride : p·stride+len(y)] (p < len(a)) to
// y: the attention-weighted sum of len(a) value rows stored stride floats
// apart. A negative stride panics.
func AxpyStrided(y, a, v []float32, stride int) {
	if len(y) == 0 || len(a) == 0 {
		return
	}
	if stride < 0 {
		panic(fmt.Sprintf("tensor: AxpyStrided: negative stride %d", stride))
	}
	_ = v[(len(a)-1)*stride+len(y)-1]
	if impl.axpyStrided != nil && len(y) >= shortVec {
		impl.axpyStrided(y, a, v, stride)
		return
	}
	for p, ap := range a {
		Axpy(y, ap, v[p*stride:p*stride+len(y)])
	}
}

// AxpyStrided4 is AxpyStrided for four rows: y[r·ldy : r·ldy+hd] gets
// Σ_p a[r·lda+p]·v[p·stride : p·stride+hd] (p < np) added, for r < 4,
// with the bits four AxpyStrided calls give (each row's own order), the
// value rows loaded once for the four where the level has a kernel. A
// negative stride panics.
func AxpyStrided4(y []float32, ldy int, a []float32, lda int, v []float32, stride, np, hd int) {
	if np <= 0 || hd <= 0 {
		return
	}
	if ldy < 0 || lda < 0 || stride < 0 {
		panic(fmt.Sprintf("tensor: AxpyStrided4: negative stride (ldy %d, lda %d, stride %d)", ldy, lda, stride))
	}
	if impl.axpyStrided4 == nil || hd%16 != 0 || ldy < hd || lda < np {
		for r := range 4 {
			AxpyStrided(y[r*ldy:r*ldy+hd], a[r*lda:r*lda+np], v, stride)
		}
		return
	}
	_, _, _ = y[3*ldy+hd-1], a[3*lda+np-1], v[(np-1)*stride+hd-1]
	impl.axpyStrided4(&y[0], ldy, &a[0], lda, &v[0], stride, np, hd)
}

// AxpyBlocks is AxpyStrided4 over whole blocks of bs value rows, one
// after the other, for n rows (a positive multiple of 4) in groups of
// four: block b < len(bt) has its rows at v[bt[b]·blk:] (stride apart)
// and their weights at a[r·lda + b·bs:] for row r < n — the bits of one
// AxpyStrided4 call per block and group, in block order, for the KV-cache
// blocks every row of an attention tile sees whole. Where the level has a
// kernel, it is one call, and the groups take each block in turn while
// its rows are in L1. A negative stride, block stride (blk) or block id
// panics.
func AxpyBlocks(y []float32, ldy int, a []float32, lda, n int, v []float32, bt []int32, blk, stride, bs, hd int) {
	nb := len(bt)
	if nb == 0 || bs <= 0 || hd <= 0 || n <= 0 {
		return
	}
	if n%4 != 0 {
		panic("tensor: AxpyBlocks: rows not a multiple of 4")
	}
	if ldy < 0 || lda < 0 || blk < 0 || stride < 0 {
		panic(fmt.Sprintf("tensor: AxpyBlocks: negative stride (ldy %d, lda %d, block stride %d, stride %d)", ldy, lda, blk, stride))
	}
	if impl.axpyBlocks == nil || hd%16 != 0 || ldy < hd || lda < nb*bs {
		for b, id := range bt {
			for g := 0; g < n; g += 4 {
				AxpyStrided4(y[g*ldy:], ldy, a[g*lda+b*bs:], lda, v[int(id)*blk:], stride, bs, hd)
			}
		}
		return
	}
	hi := int32(0)
	for _, id := range bt {
		if id < 0 {
			panic("tensor: AxpyBlocks: negative block")
		}
		hi = max(hi, id)
	}
	_, _, _ = y[(n-1)*ldy+hd-1], a[(n-1)*lda+nb*bs-1], v[int(hi)*blk+(bs-1)*stride+hd-1]
	impl.axpyBlocks(&y[0], ldy, &a[0], lda, &v[0], &bt[0], nb, blk, stride, bs, hd, n/4)
}

// addTail adds the products of columns [c0,c1) to an m×nn block of dots:
// their running sum in column order (each product rounded to float32, so
// never fused), added to the kernel's sum — part of the canonical order of
// the levels with vl > 1.
func addTail(out []float32, ldo int, x []float32, ldx int, w []float32, ldw, m, nn, c0, c1 int) {
	for i := 0; i < m; i++ {
		xi := x[i*ldx+c0 : i*ldx+c1]
		for j := 0; j < nn; j++ {
			wj := w[j*ldw+c0 : j*ldw+c1]
			var s float32
			for c, v := range xi {
				s += float32(v * wj[c])
			}
			out[i*ldo+j] += s
		}
	}
}

func dotK(k *kernels, a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	kv := n &^ (k.vl - 1)
	var s float32
	if kv > 0 {
		s = k.dot(a, b, kv)
	}
	for c := kv; c < n; c++ {
		s += a[c] * b[c]
	}
	return s
}

// shortVec is the length below which Dot and Axpy run a plain Go loop:
// under it the call into a SIMD kernel costs more than it saves (measured:
// at 8 floats the loop wins, from 16 the kernels do).
const shortVec = 16

// Dot returns Σ a[i]·b[i] over len(a) elements (b must be at least as long).
func Dot(a, b []float32) float32 {
	if len(a) < shortVec {
		b = b[:len(a)]
		var s float32
		for i, v := range a {
			s += v * b[i]
		}
		return s
	}
	return dotK(impl, a, b)
}

// Scale multiplies x by s in place, each element rounded once (the same
// bits as the plain loop).
func Scale(x []float32, s float32) {
	if impl.scale == nil || len(x) < shortVec {
		for i := range x {
			x[i] *= s
		}
		return
	}
	impl.scale(x, s)
}

// Axpy computes y += alpha·x over len(y) elements.
func Axpy(y []float32, alpha float32, x []float32) {
	n := len(y)
	x = x[:n]
	if n < shortVec {
		for i, v := range x {
			y[i] += alpha * v
		}
		return
	}
	kv := n &^ (impl.vl - 1)
	if kv > 0 {
		impl.axpy(y, alpha, x, kv)
	}
	for c := kv; c < n; c++ {
		y[c] += alpha * x[c]
	}
}

func (p *Pool) matMulQ8(out, x []float32, n int, w *Mat) {
	j := p.q8Quantize(out, x, n, w, false)
	j.ldw = j.nb * Q8BlockBytes
	if j.k.q8gemm != nil && n >= 4 {
		j.n4 = n &^ 3
		offsetBytes(j.xu[:j.n4*j.cols], int8AsBytes(j.xq[:j.n4*j.cols]))
	}
	j.panel = 4
	panels := (j.rows + j.panel - 1) / j.panel
	p.run(n*j.rows*j.cols, panels, p.q8Func(), j.q8Panels)
	p.doneJob()
}

// matMulQ4 is MatMul for a Q4_0 matrix in GGML blocks (not packed).
func (p *Pool) matMulQ4(out, x []float32, n int, w *Mat) {
	j := p.q8Quantize(out, x, n, w, false)
	j.panel = 4
	panels := (j.rows + j.panel - 1) / j.panel
	p.run(n*j.rows*j.cols, panels, p.q8Func(), j.q8Panels)
	p.doneJob()
}

// q8Quantize starts a Q8_0 MatMul job: it quantizes the n activation rows
// of x (and, for packed weights, their scale pairs) into the pool's
// scratch, over the pool when the work is big enough.
func (p *Pool) q8Quantize(out, x []float32, n int, w *Mat, packed bool) *mmJob {
	j := p.job()
	j.k, j.w, j.x, j.out, j.n = impl, w, x, out, n
	j.rows, j.cols = w.Rows, w.Cols
	j.nb = w.Cols / Q8BlockSize
	j.xq, j.xd, j.xu = p.q8Scratch(n*j.cols, n*j.nb)
	if packed {
		j.xs = p.q8pScratch(2 * n * j.nb)
		if w.Type == Q8_0 {
			j.xc = p.q8lScratch(n * j.cols / 4)
		}
	}
	var quantFn func(lo, hi int)
	if p != nil {
		quantFn = p.quantFn
	}
	p.run(n*j.cols*32, n, quantFn, j.quantRows)
	return j
}

// q8Func is the pool's bound q8Panels (nil for a nil Pool, which runs
// inline).
func (p *Pool) q8Func() func(lo, hi int) {
	if p == nil {
		return nil
	}
	return p.q8Fn
}

// quantRows quantizes activation rows [lo,hi).
func (j *mmJob) quantRows(lo, hi int) {
	cols, nb := j.cols, j.nb
	j.k.quantize(j.xq[lo*cols:hi*cols], j.xd[lo*nb:hi*nb], j.x[lo*cols:hi*cols])
	if j.xs != nil {
		f := j.k.q8ps
		if f == nil {
			f = q8pScales
		}
		f(j.xs[2*lo*nb:2*hi*nb], j.xq[lo*cols:hi*cols], j.xd[lo*nb:hi*nb])
		if j.xc != nil {
			q8lCorr(j.xc[lo*cols/4:hi*cols/4], j.xq[lo*cols:hi*cols])
		}
		if j.w.Type == Q4_0 { // −8·Σx for the nibbles (q4pack.go)
			for k := 2*lo*nb + 1; k < 2*hi*nb; k += 2 {
				j.xs[k] = uint32(int32(j.xs[k]) >> 4)
			}
		}
	}
}

// q8Panels computes the outputs of W row panels [lo,hi).
func (j *mmJob) q8Panels(lo, hi int) {
	if j.w.P != nil {
		j.q8pPanels(lo, hi)
		return
	}
	if j.w.Type == Q4_0 {
		j.q4Rows(lo*j.panel, min(hi*j.panel, j.rows))
		return
	}
	k, n, rows, cols, nb, ldw := j.k, j.n, j.rows, j.cols, j.nb, j.ldw
	out, xq, xd, xu := j.out, j.xq, j.xd, j.xu
	r0, r1 := lo*j.panel, min(hi*j.panel, rows)
	for r := r0; r < r1; r += j.panel {
		wp := j.w.Q[r*ldw:]
		m := min(j.panel, r1-r)
		if m < 4 {
			for i := 0; i < n; i++ {
				xqi, xdi := xq[i*cols:(i+1)*cols], xd[i*nb:(i+1)*nb]
				for jj := 0; jj < m; jj++ {
					out[i*rows+r+jj] = q8dot1(xqi, xdi, wp[jj*ldw:(jj+1)*ldw], nb)
				}
			}
			continue
		}
		for i := 0; i < j.n4; i += 4 {
			k.q8gemm(out[i*rows+r:], rows, xu[i*cols:], cols, xd[i*nb:], nb, wp, ldw, nb)
		}
		for i := j.n4; i < n; i++ {
			k.q8dot4(out[i*rows+r:i*rows+r+4], xq[i*cols:(i+1)*cols], xd[i*nb:(i+1)*nb], wp, ldw, nb)
		}
	}
}

// offsetBytes writes src+128 (mod 256) to dst: int8 values as the unsigned
// bytes 0..255.
func offsetBytes(dst, src []byte) {
	dst = dst[:len(src)]
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])^0x8080808080808080)
	}
	for ; i < len(src); i++ {
		dst[i] = src[i] ^ 0x80
	}
}

// q8dot1 is the one-row form of q8dot4, for the last rows of a matrix.
func q8dot1(xq []int8, xd []float32, w []byte, nb int) float32 {
	var s float32
	for b := 0; b < nb; b++ {
		blk := w[b*Q8BlockBytes : (b+1)*Q8BlockBytes]
		xb := xq[b*Q8BlockSize : (b+1)*Q8BlockSize]
		var is int32
		for t, q := range blk[2:] {
			is += int32(xb[t]) * int32(int8(q))
		}
		s += float32(is) * (xd[b] * F16ToF32(uint16(blk[0])|uint16(blk[1])<<8))
	}
	return s
}

// q8Scratch returns buffers for the quantized activations, reused across
// calls (the pool has one caller at a time).
func (p *Pool) q8Scratch(nq, nd int) ([]int8, []float32, []byte) {
	if p == nil {
		return make([]int8, nq), make([]float32, nd), make([]byte, nq)
	}
	if cap(p.xq) < nq {
		p.xq = make([]int8, nq)
		p.xu = make([]byte, nq)
	}
	return p.xq[:nq], grow(&p.xd, nd), p.xu[:nq]
}

// quantizeRow quantizes activation rows x to Q8_0 values q and float32
// scales d (float16 values) as GGML's CPU backend does on x86
// (ggml-cpu/arch/x86/quants.c quantize_row_q8_0, which llama.cpp applies to
// the activations of every Q8_0/Q4_0 matmul): d = max|x|/127 rounded to
// float16, values round-half-to-even(x·(127/max|x|)). This is not
// QuantizeQ8_0 (GGML's reference, used for weights: round half away from
// zero of x·(1/d)); the two differ in rare ties and last-bit products.
func quantizeRow(q []int8, d []float32, x []float32) {
	for b := range d {
		xb := x[b*Q8BlockSize : (b+1)*Q8BlockSize]
		amax := q8Amax(xb)
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		qb := q[b*Q8BlockSize : (b+1)*Q8BlockSize]
		for j, v := range xb {
			qb[j] = int8(math.RoundToEven(float64(v * id)))
		}
		d[b] = F16ToF32(F32ToF16(amax / 127))
	}
}
