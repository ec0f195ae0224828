package tensor

import (
	"fmt"
	"math"
)

// MatMul over the block formats of codec.go (Mat.Q in GGML blocks) and
// over Stacked matrices.
//
// The activation rows are quantized once per call to the codec's
// activation type as GGML's CPU backend does (Q8_0: quantizeRow; Q8_1:
// the same plus s = d·Σq; Q8_K: quantize_row_q8_K_ref), then every output
// is, in block order,
//
//	K formats:  GGML's x86 AVX2 vec_dot order (dotAcc): exact int32 lane
//	            sums of sc·q·x and of the mins' mn·bsum, fused into float
//	            lanes per super-block, reduced at the end
//	32-blocks:  acc += float32(I)·(d·dx) (+ m·s for Q4_1/Q5_1), GGML's
//	            generic order
//
// An output depends only on its weight row and activation row: batch
// invariant. (The order matters: on llama.cpp's goldens, Q5_K in the
// generic order moved a 200-token prompt's logprobs by 0.07, in this
// order they match to 2e-6.)

// actRows holds n activation rows quantized for one codec.
type actRows struct {
	q    []int8    // n×cols
	d    []float32 // per block
	s    []float32 // Q8_1: per block, float16 d·Σq
	bsum []int32   // Q8_K: per 16 values
}

// quantizeAct quantizes n rows of x (cols each) for codec c, into new
// memory.
func quantizeAct(c *Codec, x []float32, n, cols int) *actRows {
	a := new(actRows)
	a.quantize(c, x, n, cols)
	return a
}

// quantizeAct is quantizeAct into the Pool's scratch, reused by every
// MatMul (a nil Pool allocates): a forward pass makes no garbage here.
func (p *Pool) quantizeAct(c *Codec, x []float32, n, cols int) *actRows {
	if p == nil {
		return quantizeAct(c, x, n, cols)
	}
	p.act.quantize(c, x, n, cols)
	return &p.act
}

// scratch32 returns n int32 of the Pool's scratch for a product's
// activation corrections (new memory for a nil Pool).
func (p *Pool) scratch32(n int) []int32 {
	if p == nil {
		return make([]int32, n)
	}
	return grow(&p.xaux, n)
}

// quantize quantizes n rows of x (cols each) for codec c into a's
// buffers, grown as needed.
func (a *actRows) quantize(c *Codec, x []float32, n, cols int) {
	bs := Q8BlockSize
	if c.act == actQ8_K {
		bs = 256
	}
	a.q, a.d = grow(&a.q, n*cols), grow(&a.d, n*cols/bs)
	switch c.act {
	case actQ8_K:
		a.bsum = grow(&a.bsum, n*cols/16)
		quant := quantizeQ8K
		if impl.quantizeQ8K != nil {
			quant = impl.quantizeQ8K
		}
		for b := range a.d {
			a.d[b] = quant(a.q[b*256:(b+1)*256], a.bsum[b*16:(b+1)*16], x[b*256:(b+1)*256])
		}
	case actQ8_1:
		a.s = grow(&a.s, len(a.d))
		impl.quantize(a.q, a.d, x[:n*cols])
		for b := range a.d {
			var sum int32
			for _, v := range a.q[b*32 : (b+1)*32] {
				sum += int32(v)
			}
			a.s[b] = F16ToF32(F32ToF16(q8Amax(x[b*32:(b+1)*32]) / 127 * float32(sum)))
		}
	default:
		impl.quantize(a.q, a.d, x[:n*cols])
	}
}

// quantizeQ8K quantizes 256 values as GGML's quantize_row_q8_K_ref: the
// value of largest magnitude m (the first of equals), q = min(127,
// round-half-even(x·(−127/m))), the sums of each 16, and returns the
// scale 1/(−127/m) (0 for a block of zeros).
func quantizeQ8K(q []int8, bsum []int32, x []float32) float32 {
	var amax, m float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, m = a, v
		}
	}
	clear(bsum[:16])
	if amax == 0 {
		clear(q[:256])
		return 0
	}
	iscale := -127 / m
	for j, v := range x[:256] {
		q[j] = int8(min(127, math.RoundToEven(float64(iscale*v))))
		bsum[j/16] += int32(q[j])
	}
	return 1 / iscale
}

// matMulBlocks is MatMul for a matrix in a codec's GGML blocks.
func (p *Pool) matMulBlocks(out, x []float32, n int, w *Mat, c *Codec) {
	if _, ok := b32Layouts[w.Type]; ok && w.P != nil {
		p.matMulB32P(out, x, n, w)
		return
	}
	if w.Type == IQ4_XS && w.P != nil {
		p.matMulIQ4XSP(out, x, n, w)
		return
	}
	if w.Type == Q2_K && w.P != nil {
		p.matMulQ2KP(out, x, n, w)
		return
	}
	if w.P != nil {
		p.matMulKPacked(out, x, n, w)
		return
	}
	if err := c.Check(w.Q[:min(len(w.Q), w.Rows*c.RowBytes(w.Cols))], w.Rows, w.Cols); err != nil {
		panic("tensor: MatMul: " + err.Error())
	}
	a := p.quantizeAct(c, x, n, w.Cols)
	fn := func(lo, hi int) { blockRows(out, a, n, w, c, lo, hi) }
	p.run(n*w.Rows*w.Cols, w.Rows, fn, fn)
}

// blockRows computes outputs [r0,r1) of every activation row.
func blockRows(out []float32, a *actRows, n int, w *Mat, c *Codec, r0, r1 int) {
	nb, rb := w.Cols/c.BlockSize, c.RowBytes(w.Cols)
	if f := impl.kRow[c.Type]; f != nil {
		blockDots(out, a, n, w, c, f, r0, r1)
		return
	}
	acc := make([]dotAcc, n)
	var u unpacked
	for r := r0; r < r1; r++ {
		clear(acc)
		row := w.Q[r*rb : (r+1)*rb]
		for b := 0; b < nb; b++ {
			c.unpack(&u, row[b*c.BlockBytes:(b+1)*c.BlockBytes])
			for i := 0; i < n; i++ {
				ab := i*nb + b
				xq := a.q[ab*c.BlockSize : (ab+1)*c.BlockSize]
				switch c.act {
				case actQ8_K:
					c.step(&acc[i], &u, xq, a.bsum[ab*16:(ab+1)*16], a.d[ab])
				case actQ8_1:
					// GGML: sumf += (d·dx)·I + m·s, the two products added first.
					acc[i].s += float32(float32(float32(dot32(&u, xq))*(u.d*a.d[ab])) + float32(u.dmin*a.s[ab]))
				default:
					acc[i].s += float32(float32(dot32(&u, xq)) * (u.d * a.d[ab]))
				}
			}
		}
		for i := 0; i < n; i++ {
			out[i*w.Rows+r] = c.sum(&acc[i])
		}
	}
}

// blockDots computes outputs [r0,r1) of every activation row with the
// level's kernel f (one output per call: the same bits as the steps below).
func blockDots(out []float32, a *actRows, n int, w *Mat, c *Codec, f blockDot, r0, r1 int) {
	nb, rb := w.Cols/c.BlockSize, c.RowBytes(w.Cols)
	for r := r0; r < r1; r++ {
		row := w.Q[r*rb : (r+1)*rb]
		for i := 0; i < n; i++ {
			var bsum []int32
			var xs []float32
			if c.act == actQ8_K {
				bsum = a.bsum[i*nb*16 : (i+1)*nb*16]
			}
			if c.act == actQ8_1 {
				xs = a.s[i*nb : (i+1)*nb]
			}
			out[i*w.Rows+r] = f(row, a.q[i*w.Cols:(i+1)*w.Cols], bsum, a.d[i*nb:(i+1)*nb], xs, nb)
		}
	}
}

// dot32 is Σ q·x over a 32-block.
func dot32(u *unpacked, xq []int8) int32 {
	var s int32
	for e, v := range xq[:32] {
		s += int32(u.q[e]) * int32(v)
	}
	return s
}

// dotAcc is one output's float state in GGML's x86 (AVX2) order of the K
// formats' vec_dot: eight lanes l (lane k sums elements e with e%32 in
// 4k..4k+3, each super-block's exact int32 lane sum times d = dx·d_w
// fused into it) and a scalar s (Q5_K's min terms; the 32-blocks' whole
// sum), reduced by sumLanes to ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) + s;
// Q4_K uses s and m[0] (stepQ4K).
type dotAcc struct {
	l [8]float32
	m [1]float32
	s float32
}

// sumLanes is the result of the lane orders: hsum of l, plus s.
func sumLanes(a *dotAcc) float32 {
	var h [4]float32
	for k := range h {
		h[k] = a.l[4+k] + a.l[k]
	}
	return (h[0] + h[2]) + (h[1] + h[3]) + a.s
}

// lanes adds a super-block's scaled integer lane sums to a.l.
func (a *dotAcc) lanes(u *unpacked, xq []int8, d float32) {
	var sumi [8]int32
	for e := 0; e < 256; e++ {
		sumi[e%32/4] += u.sc[e/16] * int32(u.q[e]) * int32(xq[e])
	}
	for k := range a.l {
		a.l[k] = fma32(d, float32(sumi[k]), a.l[k])
	}
}

// stepLanes is the K formats without mins (Q3_K, Q6_K, IQ4_XS).
func stepLanes(a *dotAcc, u *unpacked, xq []int8, _ []int32, dx float32) {
	a.lanes(u, xq, dx*u.d)
}

// stepQ2K: the min terms first, into the lanes (lane k: groups 2k, 2k+1),
// times −dx·dmin.
func stepQ2K(a *dotAcc, u *unpacked, xq []int8, bsum []int32, dx float32) {
	dmin := -dx * u.dmin
	for k := range a.l {
		a.l[k] = fma32(dmin, float32(u.mn[2*k]*bsum[2*k]+u.mn[2*k+1]*bsum[2*k+1]), a.l[k])
	}
	a.lanes(u, xq, dx*u.d)
}

// stepQ4K is GGML's x86 repacked Q4_K GEMM (q4_K_8x8_q8_K, AVX2 and
// AVX-512 alike, which llama.cpp runs on the prompt for Q4_K matrices of
// rows%8 == 0): per pair of sub-blocks (64 weights), the exact int32 sums
// I (scales) and M (mins) fused into two accumulators,
// s += float32(I)·(d·dx) and m0 += float32(M)·(dmin·dx); the result is
// s − m0 (sumQ4K). (Its GEMV, for one activation row, fuses once per
// super-block instead; this order serves every row, batch invariant.)
func stepQ4K(a *dotAcc, u *unpacked, xq []int8, bsum []int32, dx float32) {
	d, dmin := u.d*dx, u.dmin*dx
	for p := 0; p < 4; p++ {
		var is, ms int32
		for g := 4 * p; g < 4*p+4; g++ {
			var t int32
			for e := 16 * g; e < 16*g+16; e++ {
				t += int32(u.q[e]) * int32(xq[e])
			}
			is += u.sc[g] * t
			ms += u.mn[g] * bsum[g]
		}
		a.s = fma32(float32(is), d, a.s)
		a.m[0] = fma32(float32(ms), dmin, a.m[0])
	}
}

func sumQ4K(a *dotAcc) float32 { return a.s - a.m[0] }

// stepQ5K: the min terms summed in int32, times −dx·dmin, added to s.
func stepQ5K(a *dotAcc, u *unpacked, xq []int8, bsum []int32, dx float32) {
	var ms int32
	for g := range bsum[:16] {
		ms += u.mn[g] * bsum[g]
	}
	a.s += float32(float32(-dx*u.dmin) * float32(ms)) // rounded: never fused
	a.lanes(u, xq, dx*u.d)
}

// matMulStacked is MatMul for a Stacked matrix: each part's outputs, in
// its own format, land in its rows.
func (p *Pool) matMulStacked(out, x []float32, n int, w *Mat) {
	r0 := 0
	for k := range w.Parts {
		pt := &w.Parts[k]
		if pt.Cols != w.Cols {
			panic(fmt.Sprintf("tensor: MatMul: stacked part of %d columns in a matrix of %d", pt.Cols, w.Cols))
		}
		var tmp []float32
		if p == nil {
			tmp = make([]float32, n*pt.Rows)
		} else {
			tmp = grow(&p.stk, n*pt.Rows) // parts' products use other scratch
		}
		p.MatMul(tmp, x, n, pt)
		for i := 0; i < n; i++ {
			copy(out[i*w.Rows+r0:i*w.Rows+r0+pt.Rows], tmp[i*pt.Rows:(i+1)*pt.Rows])
		}
		r0 += pt.Rows
	}
	if r0 != w.Rows {
		panic(fmt.Sprintf("tensor: MatMul: stacked parts hold %d rows, want %d", r0, w.Rows))
	}
}
