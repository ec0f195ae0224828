package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ggmlQ8Ref is GGML's x86 Q8_0 dot product order computed from the GGML
// blocks q (rows×cols) and n activation rows x quantized as MatMul does:
// per output, per block and four-column step k4, acc[k4] =
// fma(dw·dx, float32(Σ_{t<4} x·w), acc[k4]), reduced as
// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)) (vec_dot_q8_0_q8_0, tinyBLAS).
func ggmlQ8Ref(q []byte, rows, cols int, x []float32, n int) []float32 {
	nb := cols / 32
	xq, xd, out := quantizedRows(x, n, rows, cols)
	for i := 0; i < n; i++ {
		for r := 0; r < rows; r++ {
			var l [8]float32
			for b := 0; b < nb; b++ {
				blk := q[(r*nb+b)*Q8BlockBytes:]
				d := F16ToF32(uint16(blk[0])|uint16(blk[1])<<8) * xd[i*nb+b]
				for k := 0; k < 8; k++ {
					var s int32
					for t := 4 * k; t < 4*k+4; t++ {
						s += int32(int8(blk[2+t])) * int32(xq[i*cols+32*b+t])
					}
					l[k] = fma32(d, float32(s), l[k])
				}
			}
			out[i*rows+r] = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
		}
	}
	return out
}

// quantizedRows quantizes n activation rows of x as MatMul does, and
// returns them with an output buffer for rows outputs each.
func quantizedRows(x []float32, n, rows, cols int) (xq []int8, xd, out []float32) {
	xq, xd = make([]int8, n*cols), make([]float32, n*cols/32)
	quantizeRow(xq, xd, x[:n*cols])
	return xq, xd, make([]float32, n*rows)
}

// TestMatMulQ8GGMLOrder: packed Q8_0 gives the bits of ggmlQ8Ref at every
// level with packed kernels, for shapes around the group pairs (partial and
// odd last groups), with specials (zero scales, ±127 and −128 weights, a
// zero activation row), for both thread counts.
func TestMatMulQ8GGMLOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	pool := NewPool(2)
	defer pool.Close()
	eachImpl(t, func(t *testing.T) {
		if impl.q8p == nil {
			t.Skip("no packed Q8_0 at this level")
		}
		for _, s := range []struct{ rows, cols int }{{1, 32}, {15, 64}, {16, 96}, {17, 256}, {33, 128}, {48, 512}, {130, 64}} {
			w := quantizeMat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
			nb := s.cols / 32
			for r := 0; r < s.rows; r++ { // specials
				blk := w.Q[(r*nb+r%nb)*Q8BlockBytes:]
				switch r % 4 {
				case 1:
					blk[0], blk[1] = 0, 0 // zero scale
				case 2:
					for t := 2; t < 34; t++ {
						blk[t] = byte(int8(127 - 255*(t%2))) // +127, −128
					}
				}
			}
			wp := packedMat(w)
			for _, n := range []int{1, 2, 3, 5} {
				x := randVec(rng, n*s.cols)
				clear(x[:s.cols]) // a zero row
				want := ggmlQ8Ref(w.Q, s.rows, s.cols, x, n)
				for _, p := range []*Pool{nil, pool} {
					got := make([]float32, n*s.rows)
					p.MatMul(got, x, n, wp)
					for k := range want {
						if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
							t.Fatalf("%dx%d n=%d: out[%d][%d] = %v, GGML order %v", s.rows, s.cols, n, k/s.rows, k%s.rows, got[k], want[k])
						}
					}
				}
			}
		}
	})
}
