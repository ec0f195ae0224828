package tensor

import "math"

// DType is the storage type of a weight matrix at rest in memory.
type DType uint8

const (
	F32  DType = iota
	Q8_0       // blocks of 32 weights: one float16 scale + 32 int8 (34 bytes)
	Q4_0       // blocks of 32 weights: one float16 scale + 32 nibbles, stored +8 (18 bytes)
)

// Q8_0 block layout (as in GGML).
const (
	Q8BlockSize  = 32
	Q8BlockBytes = 34
)

// Q8RowBytes is the size of one Q8_0 row of cols weights (cols a multiple
// of Q8BlockSize).
func Q8RowBytes(cols int) int { return cols / Q8BlockSize * Q8BlockBytes }

// Q4BlockBytes is the size of a GGML Q4_0 block of Q8BlockSize weights:
// the float16 scale d, then 16 bytes whose low nibbles are weights 0..15
// and high nibbles weights 16..31, each q+8 for the weight q·d (q in
// −8..7).
const Q4BlockBytes = 18

// Q4RowBytes is the size of one Q4_0 row of cols weights (cols a multiple
// of Q8BlockSize).
func Q4RowBytes(cols int) int { return cols / Q8BlockSize * Q4BlockBytes }

// Mat is a row-major weight matrix of Rows output features × Cols inputs.
// Exactly one of F32, P32, Q, P or Parts holds the data, per Type: an F32
// matrix is in rows (F32) or, after PackF32, in the panels of the
// outer-product kernels (P32); a Q8_0 matrix is in GGML blocks (Q) or,
// after PackQ8, in the row-interleaved layout of the fast kernels (P); a
// Q4_0 matrix is in GGML blocks (Q) or, after PackQ4, in the packed nibble
// layout (P; at levels without Q4_0 kernels PackQ4 turns it into a Q8_0
// matrix instead); a matrix of another block format (codec.go) is in GGML
// blocks (Q) or, after PackBlocks, in its kernels' layout (P); a Stacked
// matrix is its Parts' rows, top to bottom, each part in its own format.
type Mat struct {
	Rows, Cols int
	Type       DType
	F32        []float32
	P32        []float32
	Q          []byte
	P          []byte
	Parts      []Mat // Stacked: the parts, top to bottom
}

// matMulRef is the portable scalar reference MatMul (one Dot per output);
// benchmarks report it as the scalar Go baseline.
func matMulRef(out, x []float32, n int, w *Mat) {
	for i := 0; i < n; i++ {
		xi := x[i*w.Cols : (i+1)*w.Cols]
		oi := out[i*w.Rows : (i+1)*w.Rows]
		for r := 0; r < w.Rows; r++ {
			switch w.Type {
			case F32:
				oi[r] = dotScalar(xi, w.F32[r*w.Cols:(r+1)*w.Cols])
			case Q8_0:
				oi[r] = dotQ8Ref(xi, w.Q[r*Q8RowBytes(w.Cols):(r+1)*Q8RowBytes(w.Cols)])
			case Q4_0:
				q := make([]byte, Q8RowBytes(w.Cols))
				expandQ4(q, w.Q[r*Q4RowBytes(w.Cols):(r+1)*Q4RowBytes(w.Cols)])
				oi[r] = dotQ8Ref(xi, q)
			}
		}
	}
}

// dotScalar is the plain Go loop Dot started from.
func dotScalar(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func dotQ8Ref(x []float32, q []byte) float32 {
	var sum float32
	for b := 0; b < len(x)/Q8BlockSize; b++ {
		blk := q[b*Q8BlockBytes : (b+1)*Q8BlockBytes]
		d := F16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
		var s float32
		for j := 0; j < Q8BlockSize; j++ {
			s += x[b*Q8BlockSize+j] * float32(int8(blk[2+j]))
		}
		sum += d * s
	}
	return sum
}

// RMSNorm writes x normalised by its root mean square, times weight, to out.
// The mean square is summed in float64 (at avx512 eight lanes at a time).
func RMSNorm(out, x, weight []float32, eps float32) {
	if len(x) == 0 {
		return
	}
	var ss float64
	if impl.sumSq != nil && len(x) >= shortVec {
		ss = impl.sumSq(x)
	} else {
		for _, v := range x {
			ss += float64(v * v) // the square rounded to float32, as GGML
		}
	}
	// As GGML: the mean and the scale in float32.
	mean := float32(ss / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	if impl.scaleMul != nil && len(x) >= shortVec {
		impl.scaleMul(out[:len(x)], x, weight, scale)
		return
	}
	for i, v := range x {
		out[i] = v * scale * weight[i]
	}
}

// Rope rotates the pairs (x[2i], x[2i+1]) of each 2h-float segment of x
// (h = len(cs); whole segments only) by the angle whose cosine and sine
// are cs[i] and sn[i]: (a·c − b·s, a·s + b·c), each product and sum
// rounded on its own (the same bits at every level).
func Rope(x, cs, sn []float32) {
	h := len(cs)
	if h == 0 {
		return
	}
	n := len(x) / (2 * h) * (2 * h)
	if n == 0 {
		return
	}
	if impl.rope != nil && h%8 == 0 {
		impl.rope(x[:n], cs, sn[:h])
		return
	}
	sn = sn[:h]
	for off := 0; off < n; off += 2 * h {
		v := x[off : off+2*h]
		for i := 0; i < h; i++ {
			a, b := v[2*i], v[2*i+1]
			v[2*i] = a*cs[i] - b*sn[i]
			v[2*i+1] = a*sn[i] + b*cs[i]
		}
	}
}

// Softmax normalises x in place: x[i] = e^(x[i]-max) / Σ e^(x[j]-max).
// The exponential is Cephes' float32 expf (relative error ≈ 1e-7);
// inputs more than 87 below the maximum give ≈1e-38 rather than 0.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	impl.softmax(x)
}

// SwiGLU computes gate[i] = silu(gate[i]) · up[i] in place, where
// silu(g) = g/(1+e^-g), over len(gate) elements.
func SwiGLU(gate, up []float32) {
	if len(gate) == 0 {
		return
	}
	impl.swiglu(gate, up[:len(gate)])
}

// F16ToF32 converts an IEEE half-precision bit pattern.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// BF16ToF32 converts a bfloat16 bit pattern.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
