package tensor

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestHugePages: HugePages leaves every byte of a matrix's buffers (packed
// weights, GGML blocks, F32 rows, Stacked parts) as it was, and backs no
// more than the buffers hold.
func TestHugePages(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	q := randBlocks(rng, CodecOf(Q4_K), 4096*2048/256)
	packed := &Mat{Rows: 4096, Cols: 2048, Type: Q4_K, Q: append([]byte(nil), q...)}
	PackBlocks(packed)
	f := randVec(rng, 1<<20)
	for _, tc := range []struct {
		name string
		w    *Mat
	}{
		{"packed", packed},
		{"blocks", &Mat{Rows: 4096, Cols: 2048, Type: Q4_K, Q: append([]byte(nil), q...)}},
		{"f32", &Mat{Rows: 1024, Cols: 1024, Type: F32, F32: append([]float32(nil), f...)}},
		{"stacked", &Mat{Rows: 8192, Cols: 2048, Type: Stacked, Parts: []Mat{
			{Rows: 4096, Cols: 2048, Type: Q4_K, Q: append([]byte(nil), q...)},
			{Rows: 4096, Cols: 2048, Type: Q4_K, Q: append([]byte(nil), q...)}}}},
		{"small", &Mat{Rows: 16, Cols: 256, Type: Q4_K, Q: append([]byte(nil), q[:16*144]...)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := matBytes(tc.w)
			n := HugePages(tc.w)
			after := matBytes(tc.w)
			if !bytes.Equal(before, after) {
				t.Fatal("HugePages changed the weights")
			}
			if n < 0 || n > len(after) || n%(2<<20) != 0 {
				t.Fatalf("HugePages backed %d bytes of %d", n, len(after))
			}
			t.Logf("%d of %d bytes in huge pages", n, len(after))
		})
	}
}

// matBytes is a copy of every buffer of w, parts included.
func matBytes(w *Mat) []byte {
	var b []byte
	for i := range w.Parts {
		b = append(b, matBytes(&w.Parts[i])...)
	}
	for _, s := range [][]byte{w.P, w.Q, f32Bytes(w.P32), f32Bytes(w.F32)} {
		b = append(b, s...)
	}
	return b
}
