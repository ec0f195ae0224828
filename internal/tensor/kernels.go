package tensor

import "math"

// kernels is one implementation level's set of micro-kernels. The F32
// kernels work on the first kv = k &^ (vl-1) columns only; the callers in
// matmul.go add the remaining columns' products in Go.
//
// Batch invariance: dot1, mv4, mv8 and gemm sum every output in the same
// order — the level's canonical order — so an output's bits depend only on
// its x row and W row, never on which kernel, tile position, batch size or
// thread computed it (see doc.go). dot is free to use another order; it
// serves Dot only.
// blockDot is one output of a block format on GGML blocks (blockmm.go):
// nb blocks of a weight row against one activation row (bytes xq, scales
// xd; the Q8_K 16-sums bsum for the K formats, the Q8_1 sums xs for Q4_1
// and Q5_1, nil otherwise).
type blockDot func(blk []byte, xq []int8, bsum []int32, xd, xs []float32, nb int) float32

type kernels struct {
	name string
	vl   int // column granularity of the F32 kernels (a power of two)

	// dot returns Σ a[c]·b[c] over c < k (k a multiple of vl), in any order.
	dot func(a, b []float32, k int) float32
	// dot1 returns Σ_c x[c]·w[c] over c < k in the canonical order.
	dot1 func(x, w []float32, k int) float32
	// mv4 writes out[j] = Σ_c x[c]·w[j·ldw+c] for j < 4, c < k.
	mv4 func(out, x, w []float32, ldw, k int)
	// mv8 (optional) is mv4 for eight W rows: the matvec kernel.
	mv8 func(out, x, w []float32, ldw, k int)
	// gemm writes out[i·ldo+j] = Σ_c x[i·ldx+c]·w[j·ldw+c] for i < mr, j < nr,
	// c < k (needed without gemmBlk, which replaces it where present).
	gemm   func(out []float32, ldo int, x []float32, ldx int, w []float32, ldw, k int)
	mr, nr int
	// gemmBlk (optional) is gemm for tiles consecutive x tiles (rows
	// mr·t.., outputs likewise) over one block of columns of a longer sum
	// (see f32Blocked), x packed by packX (16 columns of the tile's mr
	// rows after each other): each tile's mr·nr 16-lane accumulators start
	// from acc[t·mr·nr·16:] (flags&gemmLoad) or zero, and end there or,
	// with flags&gemmFinal, summed into out in the canonical order.
	// k%16 == 0 unless final. It prefetches into L2 the nr×k block at pf
	// (ldw).
	gemmBlk func(out []float32, ldo int, xp []float32, w []float32, ldw, k int, acc []float32, flags int, pf []float32, tiles int)
	// packX (optional) is the function packX, faster.
	packX func(dst, x []float32, ldx, tiles, kb int)
	// axpy computes y[c] += alpha·x[c] over c < k (k a multiple of vl).
	axpy func(y []float32, alpha float32, x []float32, k int)

	// q8dot4 writes out[j] = Σ_b xd[b]·dw[j,b]·Σ_t xq[32b+t]·wq[j,b,t] for
	// j < 4 over nb blocks, where W row j starts at w[j·ldw] in GGML Q8_0
	// layout (dw = the block's float16 scale).
	q8dot4 func(out []float32, xq []int8, xd []float32, w []byte, ldw, nb int)
	// q8gemm (optional) is q8dot4 for four activation rows at once:
	// out[i·ldo+j] for i, j < 4, activation row i at xu[i·ldx:] stored
	// offset by +128 (xu = xq ^ 0x80) with scales at xd[i·ldd:].
	q8gemm func(out []float32, ldo int, xu []byte, ldx int, xd []float32, ldd int, w []byte, ldw, nb int)
	// quantize converts len(d) blocks of x to Q8_0 values q and float32
	// scales d, bit-identical to QuantizeQ8_0.
	quantize func(q []int8, d []float32, x []float32)
	// quantizeQ8K (optional) is quantizeQ8K (one block of 256), faster.
	quantizeQ8K func(q []int8, bsum []int32, x []float32) float32
	// quantizeQ4 (optional) is QuantizeQ4_0 for len(x)/32 ≥ 1 blocks,
	// dst exactly their size; nil: quantizeQ4Go.
	quantizeQ4 func(dst []byte, x []float32)
	// q8p computes the outputs of packed Q8_0 groups [g0,g1) (16 W rows
	// each) for all activation rows, in the canonical order of q8pack.go.
	// nil: the level runs packed matrices with q8pRowsGo, and PackQ8
	// leaves matrices in GGML layout.
	q8p func(a *q8pArgs, g0, g1 int)
	// q4p: q8p also runs the packed Q4_0 layout (q8pArgs.q4; q4pack.go).
	// false: PackQ4 expands Q4_0 matrices to Q8_0, and packed ones (from
	// another level) run with q8pRowsGo.
	q4p bool
	// q4k (optional) computes packed Q4_K outputs of groups [g0,g1)
	// (q4kpack.go); nil: Q4_K matrices stay in GGML blocks (blockmm.go).
	q4k func(a *kpArgs, g0, g1 int)
	// q3k, q5k and q6k (optional) are the same for packed Q3_K, Q5_K and
	// Q6_K (q3kpack.go, q5kpack.go, q6kpack.go).
	q3k, q5k, q6k func(a *kpArgs, g0, g1 int)
	// b32p (optional) computes packed Q4_1, Q5_0, Q5_1 or IQ4_NL outputs
	// of groups [g0,g1) (b32pack.go); nil: those matrices stay in GGML
	// blocks.
	b32p func(a *b32Args, t DType, g0, g1 int)
	// iq4xs (optional) is the same for packed IQ4_XS (iq4xspack.go).
	iq4xs func(a *xsArgs, g0, g1 int)
	// q2k (optional) is the same for packed Q2_K (q2kpack.go).
	q2k func(a *q2kArgs, g0, g1 int)
	// kRow (optional) has, per block format, one output on GGML blocks: a
	// row of nb blocks against one activation row, in the Go code's order
	// (the same bits as blockRows' steps and sum).
	kRow map[DType]blockDot
	// q8ps (optional) is q8pScales: a decode step's activations need
	// it for every block of every matrix's input.
	q8ps func(xs []uint32, xq []int8, xd []float32)

	// softmax and swiglu implement Softmax and SwiGLU (len ≥ 1).
	softmax func(x []float32)
	swiglu  func(gate, up []float32)

	// axpyStrided (optional) implements AxpyStrided (len(y), len(a) ≥ 1).
	axpyStrided func(y, a, v []float32, stride int)

	// f32p (optional) is a packed F32 kernel (f32pack.go): the first valid
	// outputs of each of mr rows (ldo apart) of the x tile xp against nz/2
	// panels (ps floats apart) over k ≥ 1 columns, from zero or
	// (flags&1) from out, in the level's packed canonical order; nz is 2,
	// or f32pWide(mr) with every output valid. nil: the level runs packed
	// matrices with f32pGo, and PackF32 leaves matrices in rows (the go
	// level: f32pGo, strided over the panels, is a quarter as fast as its
	// row-major kernels, whose bits it only repeats). Each
	// column step prefetches into L2 the line at pf (non-empty), which
	// advances pfs bytes per step.
	f32p func(out []float32, ldo int, xp []float32, mr int, w []float32, ps, nz, k, flags, valid int, pf []float32, pfs int)
	// scale (optional) implements Scale (len(x) ≥ shortVec).
	scale func(x []float32, s float32)
	// sumSq (optional) is RMSNorm's Σ x² in float64, in any order;
	// scaleMul its out[i] = (x[i]·s)·w[i] (len(out) ≥ 1).
	sumSq    func(x []float32) float64
	scaleMul func(out, x, w []float32, s float32)
	// rope (optional) implements Rope for len(cs) a multiple of 8 and
	// len(x) a positive multiple of 2·len(cs).
	rope func(x, cs, sn []float32)
	// axpyStrided4 (optional, with axpyStrided) implements AxpyStrided4
	// for hd a positive multiple of 16 and np ≥ 1, the arguments checked.
	axpyStrided4 func(y *float32, ldy int, a *float32, lda int, v *float32, stride, np, hd int)

	// scores (optional) writes out[i·ldo+j] = Σ_{t<k} x[i·ldx+t]·w[j·ldw+t]
	// for i < n, j < m (all ≥ 1), each in the canonical order, without
	// planning or packing: MatMulStrided for the few rows and columns of
	// an attention tile, the arguments checked. Each sum is then
	// multiplied by scale (as Scale would: 1 changes no bits).
	scores func(out *float32, ldo int, x *float32, ldx, n int, w *float32, ldw, m, k int, scale float32)

	// axpyBlocks (optional, with axpyStrided4) implements AxpyBlocks for
	// groups·4 rows, hd a positive multiple of 16 and bs ≥ 1, the
	// arguments checked.
	axpyBlocks func(y *float32, ldy int, a *float32, lda int, v *float32, bt *int32, nb, blk, stride, bs, hd, groups int)

	// f32pPack (optional) is packXCols (mr ≤ 16), faster.
	f32pPack func(dst, x []float32, ldx, mr, kb, ldd int)
}

// goKernels is the portable implementation, used where no SIMD level is
// available and as the reference level in tests.
var goKernels = &kernels{
	name: "go", vl: 1,
	dot: dotGo, dot1: dot1Go, mv4: mv4Go, gemm: gemmGo, mr: 2, nr: 4, axpy: axpyGo,
	q8dot4: q8dot4Go, quantize: quantizeRow, q8p: q8pRowsGo,
	softmax: softmaxGo, swiglu: swigluGo,
}

// expf returns e^x in float32 with Cephes' expf polynomial (the method of
// the SIMD kernels), x clamped to [-87.33654, 88].
func expf(x float32) float32 {
	if x < -87.33654 {
		x = -87.33654
	}
	if x > 88 {
		x = 88
	}
	fx := x*1.44269504088896341 + 0.5
	n := int32(fx) // floor(fx): truncation, corrected below zero
	if float32(n) > fx {
		n--
	}
	fn := float32(n)
	t := x - fn*0.693359375 - fn*-2.12194440e-4
	y := ((((1.9875691500e-4*t+1.3981999507e-3)*t+8.3334519073e-3)*t+4.1665795894e-2)*t+1.6666665459e-1)*t + 5.0000001201e-1
	return (y*t*t + t + 1) * math.Float32frombits(uint32(n+127)<<23)
}

func softmaxGo(x []float32) {
	m := x[0]
	for _, v := range x[1:] {
		if v > m { // not the max builtin: its NaN handling costs branches
			m = v
		}
	}
	var s float32
	for i, v := range x {
		e := expf(v - m)
		x[i] = e
		s += e
	}
	inv := 1 / s
	for i := range x {
		x[i] *= inv
	}
}

func swigluGo(gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		gate[i] = g / (1 + expf(-g)) * up[i]
	}
}

// impl is the level in use; tests switch it with useImpl.
var impl = bestImpl()

func bestImpl() *kernels {
	if l := archImpls(); len(l) > 0 {
		return l[len(l)-1]
	}
	return goKernels
}

// allImpls lists every level this CPU can run, slowest first.
func allImpls() []*kernels { return append([]*kernels{goKernels}, archImpls()...) }

func dotGo(a, b []float32, k int) float32 {
	a, b = a[:k], b[:k]
	var s0, s1, s2, s3 float32
	c := 0
	for ; c+4 <= k; c += 4 {
		aa, bb := a[c:c+4:c+4], b[c:c+4:c+4]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
	}
	for ; c < k; c++ {
		s0 += a[c] * b[c]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGo(y []float32, alpha float32, x []float32, k int) {
	y, x = y[:k], x[:k]
	for c := range y {
		y[c] += alpha * x[c]
	}
}

// The go level's canonical order is one running sum per output over the
// columns in order, each product rounded to float32 before it is added (the
// conversions forbid the compiler from fusing the multiply and the add,
// which it may do at some call sites and not others).

func dot1Go(x, w []float32, k int) float32 {
	x, w = x[:k], w[:k]
	var s float32
	for c, xv := range x {
		s += float32(xv * w[c])
	}
	return s
}

func mv4Go(out, x, w []float32, ldw, k int) {
	x = x[:k]
	w0, w1, w2, w3 := w[:k], w[ldw:ldw+k], w[2*ldw:2*ldw+k], w[3*ldw:3*ldw+k]
	var s0, s1, s2, s3 float32
	for c, xv := range x {
		s0 += float32(xv * w0[c])
		s1 += float32(xv * w1[c])
		s2 += float32(xv * w2[c])
		s3 += float32(xv * w3[c])
	}
	out[0], out[1], out[2], out[3] = s0, s1, s2, s3
}

func gemmGo(out []float32, ldo int, x []float32, ldx int, w []float32, ldw, k int) {
	for i := 0; i < 2; i++ {
		mv4Go(out[i*ldo:], x[i*ldx:], w, ldw, k)
	}
}

func q8dot4Go(out []float32, xq []int8, xd []float32, w []byte, ldw, nb int) {
	var acc [4]float32
	for j := range acc {
		row := w[j*ldw : j*ldw+nb*Q8BlockBytes]
		var sum float32
		for b := 0; b < nb; b++ {
			blk := row[b*Q8BlockBytes : (b+1)*Q8BlockBytes : (b+1)*Q8BlockBytes]
			q := blk[2:Q8BlockBytes]
			xb := xq[b*Q8BlockSize : (b+1)*Q8BlockSize : (b+1)*Q8BlockSize]
			var s0, s1, s2, s3 int32
			for t := 0; t+4 <= len(q); t += 4 {
				qq, xx := q[t:t+4:t+4], xb[t:t+4:t+4]
				s0 += int32(xx[0]) * int32(int8(qq[0]))
				s1 += int32(xx[1]) * int32(int8(qq[1]))
				s2 += int32(xx[2]) * int32(int8(qq[2]))
				s3 += int32(xx[3]) * int32(int8(qq[3]))
			}
			sum += float32(s0+s1+s2+s3) * (xd[b] * F16ToF32(uint16(blk[0])|uint16(blk[1])<<8))
		}
		acc[j] = sum
	}
	copy(out[:4], acc[:])
}

// Level names the kernel level this CPU runs: "avx512", "avx2" or "go".
func Level() string { return impl.name }
