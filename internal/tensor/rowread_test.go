package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDequantizeRow: each row read from a matrix (GGML blocks, or packed
// by PackQ8 / PackBlocks where the level packs) is its GGML blocks'
// dequantization, bit for bit; row counts not a multiple of 16 included.
func TestDequantizeRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		typ        DType
		rows, cols int
	}{{Q8_0, 37, 512}, {Q6_K, 37, 512}, {Q6_K, 16, 256}, {Q4_K, 21, 256}, {Q8_0, 5, 64}} {
		c := CodecOf(tc.typ)
		q := randBlocks(rng, c, tc.rows*tc.cols/c.BlockSize)
		w := &Mat{Rows: tc.rows, Cols: tc.cols, Type: tc.typ, Q: append([]byte(nil), q...)}
		PackQ8(w)
		PackBlocks(w)
		if !RowReadable(w) {
			if tc.typ == Q8_0 || tc.typ == Q6_K {
				t.Fatalf("%s %d×%d (packed %v): not row-readable", c.Name, tc.rows, tc.cols, w.P != nil)
			}
			continue // Q4_K packed: rows are not read from it
		}
		rb := c.RowBytes(tc.cols)
		got, want := make([]float32, tc.cols), make([]float32, tc.cols)
		for r := 0; r < tc.rows; r++ {
			c.Dequantize(want, q[r*rb:(r+1)*rb])
			DequantizeRow(got, w, r)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s %d×%d (packed %v) row %d [%d]: %g, want %g", c.Name, tc.rows, tc.cols, w.P != nil, r, i, got[i], want[i])
				}
			}
		}
	}
}
