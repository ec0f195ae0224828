package model

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"govllm/internal/tensor"
)

// TestQuantizeMatChunks: quantizeMat, which splits the rows over
// goroutines, gives the bytes of one QuantizeQ8_0 or QuantizeQ4_0 call
// over the whole matrix, for row chunks that divide the rows or not and
// rows wider than a chunk.
func TestQuantizeMatChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ rows, cols int }{{1, 32}, {3, 64}, {70, 2048}, {64, 1024}, {3, 1 << 17}} {
		f := make([]float32, tc.rows*tc.cols)
		for i := range f {
			f[i] = float32(rng.NormFloat64())
		}
		for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0} {
			want := make([]byte, tc.rows*tensor.Q8RowBytes(tc.cols))
			if dt == tensor.Q4_0 {
				want = want[:tc.rows*tensor.Q4RowBytes(tc.cols)]
				tensor.QuantizeQ4_0(want, f)
			} else {
				tensor.QuantizeQ8_0(want, f)
			}
			m := f32Mat(tc.rows, tc.cols, f)
			quantizeMat(&m, dt)
			if m.Type != dt || m.Rows != tc.rows || m.Cols != tc.cols || !bytes.Equal(m.Q, want) {
				t.Errorf("%d×%d %v: type %v, %d×%d, bytes equal %v", tc.rows, tc.cols, dt, m.Type, m.Rows, m.Cols, bytes.Equal(m.Q, want))
			}
		}
	}
}
