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
//	K formats:  acc += float32(I)·(d·dx); acc −= float32(M)·(dmin·dx)
//	32-blocks:  acc += float32(I)·(d·dx) (+ m·s for Q4_1/Q5_1)
//
// with I = Σ_g sc_g·Σ_{e∈g} q_e·x_e and M = Σ_g mn_g·bsum_g exact int32
// sums (GGML's integer sums; the float steps are those of its generic
// vec_dot_*), each product rounded before the add. An output depends only
// on its weight row and activation row: batch invariant.

// actRows holds n activation rows quantized for one codec.
type actRows struct {
	q    []int8    // n×cols
	d    []float32 // per block
	s    []float32 // Q8_1: per block, float16 d·Σq
	bsum []int32   // Q8_K: per 16 values
}

// quantizeAct quantizes n rows of x (cols each) for codec c.
func quantizeAct(c *Codec, x []float32, n, cols int) *actRows {
	bs := Q8BlockSize
	if c.act == actQ8_K {
		bs = 256
	}
	a := &actRows{q: make([]int8, n*cols), d: make([]float32, n*cols/bs)}
	switch c.act {
	case actQ8_K:
		a.bsum = make([]int32, n*cols/16)
		for b := range a.d {
			a.d[b] = quantizeQ8K(a.q[b*256:(b+1)*256], a.bsum[b*16:(b+1)*16], x[b*256:(b+1)*256])
		}
	case actQ8_1:
		a.s = make([]float32, len(a.d))
		quantizeRow(a.q, a.d, x[:n*cols])
		for b := range a.d {
			var sum int32
			for _, v := range a.q[b*32 : (b+1)*32] {
				sum += int32(v)
			}
			a.s[b] = F16ToF32(F32ToF16(q8Amax(x[b*32:(b+1)*32]) / 127 * float32(sum)))
		}
	default:
		quantizeRow(a.q, a.d, x[:n*cols])
	}
	return a
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
	if err := c.Check(w.Q[:min(len(w.Q), w.Rows*c.RowBytes(w.Cols))], w.Rows, w.Cols); err != nil {
		panic("tensor: MatMul: " + err.Error())
	}
	a := quantizeAct(c, x, n, w.Cols)
	fn := func(lo, hi int) { blockRows(out, a, n, w, c, lo, hi) }
	p.run(n*w.Rows*w.Cols, w.Rows, fn, fn)
}

// blockRows computes outputs [r0,r1) of every activation row.
func blockRows(out []float32, a *actRows, n int, w *Mat, c *Codec, r0, r1 int) {
	nb, rb := w.Cols/c.BlockSize, c.RowBytes(w.Cols)
	acc := make([]float32, n)
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
					acc[i] = dotKBlock(acc[i], &u, xq, a.bsum[ab*16:(ab+1)*16], a.d[ab])
				case actQ8_1:
					// GGML: sumf += (d·dx)·I + m·s, the two products added first.
					acc[i] += float32(float32(float32(dot32(&u, xq))*(u.d*a.d[ab])) + float32(u.dmin*a.s[ab]))
				default:
					acc[i] += float32(float32(dot32(&u, xq)) * (u.d * a.d[ab]))
				}
			}
		}
		for i := 0; i < n; i++ {
			out[i*w.Rows+r] = acc[i]
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

// dotKBlock adds one super-block's product to acc.
func dotKBlock(acc float32, u *unpacked, xq []int8, bsum []int32, dx float32) float32 {
	var is, ms int32
	for g := 0; g < 16; g++ {
		var s int32
		for e := 16 * g; e < 16*g+16; e++ {
			s += int32(u.q[e]) * int32(xq[e])
		}
		is += u.sc[g] * s
		ms += u.mn[g] * bsum[g]
	}
	acc += float32(float32(is) * (u.d * dx))
	return acc - float32(float32(ms)*(u.dmin*dx))
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
		tmp := make([]float32, n*pt.Rows)
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
