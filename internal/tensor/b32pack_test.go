package tensor

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// b32Types are the formats of b32pack.go.
// and IQ4_XS (iq4xspack.go), packed by the same PackBlocks hook.
var b32Types = []DType{Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q2_K}

// b32Blocks returns randBlocks with more specials: every 11th block takes
// the largest float16 scale d, and (Q4_1, Q5_1, Q2_K) the most negative
// m or dmin.
func b32Blocks(rng *rand.Rand, c *Codec, nb int) []byte {
	q := randBlocks(rng, c, nb)
	for b := 0; b < nb; b += 11 {
		blk := q[b*c.BlockBytes:]
		if c.Type == Q2_K {
			blk = blk[80:]
		}
		binary.LittleEndian.PutUint16(blk, 0x7BFF)
		if c.Type == Q4_1 || c.Type == Q5_1 || c.Type == Q2_K {
			binary.LittleEndian.PutUint16(blk[2:], 0xFBFF)
		}
	}
	return q
}

// TestB32PackRoundTrip: unpacking a packed matrix gives its GGML blocks
// back, partial last groups included.
func TestB32PackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, typ := range b32Types[:4] {
		c, l := CodecOf(typ), b32Layouts[typ]
		for _, s := range []struct{ rows, cols int }{{1, 32}, {17, 96}, {32, 256}} {
			q := b32Blocks(rng, c, s.rows*s.cols/32)
			p := l.pack(q, c.BlockBytes, s.rows, s.cols)
			if len(p) != l.packedBytes(s.rows, s.cols) {
				t.Fatalf("%s %dx%d: %d packed bytes, want %d", c.Name, s.rows, s.cols, len(p), l.packedBytes(s.rows, s.cols))
			}
			if got := l.unpack(p, c.BlockBytes, s.rows, s.cols); !bytes.Equal(got, q) {
				t.Fatalf("%s %dx%d: unpack(pack(q)) != q", c.Name, s.rows, s.cols)
			}
		}
	}
	c := CodecOf(IQ4_XS)
	q := b32Blocks(rng, c, 17*512/256)
	if got := unpackIQ4XSP(packIQ4XS(q, 17, 512), 17, 512); !bytes.Equal(got, q) {
		t.Fatalf("IQ4_XS: unpack(pack(q)) != q")
	}
	c = CodecOf(Q2_K)
	q = b32Blocks(rng, c, 17*512/256)
	if got := unpackQ2KP(packQ2K(q, 17, 512), 17, 512); !bytes.Equal(got, q) {
		t.Fatalf("Q2_K: unpack(pack(q)) != q")
	}
}

// TestB32Packed: a Q4_1, Q5_0, Q5_1 or IQ4_NL matrix PackBlocks packed
// gives the bits of its GGML blocks at the go level (blockRows) at every
// level, for rows around the groups of 16 (partial last groups, odd group
// counts for the tiles of two and four), random blocks with specials,
// zero and outlier activation rows, n = 1, 2, 3, 4, 5, 16 and 64
// activation rows (tiles of four and rows left over), with and without a
// pool.
func TestB32Packed(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for _, typ := range b32Types {
		c := CodecOf(typ)
		t.Run(c.Name, func(t *testing.T) {
			eachImpl(t, func(t *testing.T) { testB32Packed(t, c, pool) })
		})
	}
}

func testB32Packed(t *testing.T, c *Codec, pool *Pool) {
	rng := rand.New(rand.NewPCG(uint64(c.Type), 93))
	sizes := []struct{ rows, cols int }{{1, 32}, {15, 64}, {16, 32}, {17, 288}, {40, 96}, {64, 256}, {200, 64}}
	kernel := impl.b32p != nil
	if c.BlockSize == 256 {
		sizes = []struct{ rows, cols int }{{1, 256}, {15, 512}, {16, 256}, {17, 768}, {40, 256}, {64, 512}, {200, 256}}
		kernel = map[DType]bool{IQ4_XS: impl.iq4xs != nil, Q2_K: impl.q2k != nil}[c.Type]
	}
	if testing.Short() {
		sizes = sizes[:5]
	}
	for _, s := range sizes {
		q := b32Blocks(rng, c, s.rows*s.cols/c.BlockSize)
		ref := &Mat{Rows: s.rows, Cols: s.cols, Type: c.Type, Q: q}
		w := &Mat{Rows: s.rows, Cols: s.cols, Type: c.Type, Q: append([]byte(nil), q...)}
		PackBlocks(w)
		if (w.P != nil) != kernel || (w.Q == nil) != kernel {
			t.Fatalf("PackBlocks: packed %v, GGML blocks kept %v, level has the kernels %v", w.P != nil, w.Q != nil, kernel)
		}
		for _, n := range []int{1, 2, 3, 4, 5, 16, 64} {
			x := randVec(rng, n*s.cols)
			x[3] = 1e4
			if n > 1 {
				clear(x[s.cols : 2*s.cols])
			}
			if n > 2 {
				for k := 2 * s.cols; k < 3*s.cols; k++ {
					x[k] = -x[k] * 50
				}
			}
			want := make([]float32, n*s.rows)
			saved := impl
			impl = goKernels
			(*Pool)(nil).MatMul(want, x, n, ref)
			impl = saved
			for _, p := range []*Pool{nil, pool} {
				got := make([]float32, n*s.rows+1)
				got[n*s.rows] = 7
				p.MatMul(got, x, n, w)
				if got[n*s.rows] != 7 {
					t.Fatalf("%dx%d n=%d: wrote past the outputs", s.rows, s.cols, n)
				}
				for k := range want {
					if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
						t.Fatalf("%dx%d n=%d: out[%d][%d] = %v, reference %v", s.rows, s.cols, n, k/s.rows, k%s.rows, got[k], want[k])
					}
				}
			}
		}
	}
}

// TestB32PackedOtherLevel: a matrix packed at a level with the kernels
// still multiplies (on its GGML blocks unpacked again) at one without.
func TestB32PackedOtherLevel(t *testing.T) {
	if impl.b32p == nil || impl.iq4xs == nil || impl.q2k == nil {
		t.Skip("no packed kernels at this level")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []DType{Q5_1, IQ4_XS, Q2_K} {
		c := CodecOf(typ)
		const rows, cols = 20, 256
		q := b32Blocks(rng, c, rows*cols/c.BlockSize)
		ref := &Mat{Rows: rows, Cols: cols, Type: typ, Q: q}
		w := &Mat{Rows: rows, Cols: cols, Type: typ, Q: append([]byte(nil), q...)}
		PackBlocks(w)
		if w.P == nil {
			t.Fatalf("%s: not packed", c.Name)
		}
		x := randVec(rng, 3*cols)
		want, got := make([]float32, 3*rows), make([]float32, 3*rows)
		saved := impl
		impl = goKernels
		(*Pool)(nil).MatMul(want, x, 3, ref)
		(*Pool)(nil).MatMul(got, x, 3, w)
		impl = saved
		for k := range want {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("%s out %d: %v, want %v", c.Name, k, got[k], want[k])
			}
		}
	}
}
