package tensor

import (
	"encoding/binary"
	"fmt"
	"govllm/internal/cputime"
	"math"
	"math/rand/v2"
	"testing"
)

// randBlocks returns nb random blocks of codec c: random bytes, with the
// float16 fields (d, dmin/m) set to finite values of either sign, some
// zero, as special blocks: every k-th block all zero bytes, every other
// k-th all 0xFF bits in its quants.
func randBlocks(rng *rand.Rand, c *Codec, nb int) []byte {
	q := make([]byte, nb*c.BlockBytes)
	for i := range q {
		q[i] = byte(rng.Uint32())
	}
	var f16 []int // offsets of the float16 fields
	switch c.Type {
	case Q4_1, Q5_1, Q4_K, Q5_K:
		f16 = []int{0, 2}
	case Q5_0, IQ4_NL, IQ4_XS, Q8_0, Q4_0:
		f16 = []int{0}
	case Q2_K:
		f16 = []int{80, 82}
	case Q3_K:
		f16 = []int{108}
	case Q6_K:
		f16 = []int{208}
	}
	for b := 0; b < nb; b++ {
		blk := q[b*c.BlockBytes : (b+1)*c.BlockBytes]
		switch b % 7 {
		case 3:
			clear(blk)
		case 5:
			for i := range blk {
				blk[i] = 0xFF
			}
		}
		for _, o := range f16 {
			v := float32(rng.NormFloat64()) * 0.01
			if b%7 == 3 {
				v = 0
			}
			binary.LittleEndian.PutUint16(blk[o:], F32ToF16(v))
		}
	}
	return q
}

// refDot is the scalar reference of one output: GGML's dequantization of
// the weight row times the dequantized activation row, summed in float64;
// for the formats with a min m paired with Q8_1 (Q4_1, Q5_1) GGML adds
// m·s, s the activation block's float16 d·Σq, rather than m·Σ(q·d).
func refDot(c *Codec, wrow []byte, a *actRows, i, cols int) float64 {
	w := make([]float32, cols)
	c.Dequantize(w, wrow)
	bs := len(a.q) / len(a.d) // activation block size
	var s float64
	for e := 0; e < cols; e++ {
		k := i*cols + e
		we := float64(w[e])
		if a.s != nil {
			m := f16At(wrow, e/32*c.BlockBytes+2)
			we -= float64(m)
			if e%32 == 0 {
				s += float64(m) * float64(a.s[k/32])
			}
		}
		s += we * float64(a.q[k]) * float64(a.d[k/bs])
	}
	return s
}

// TestBlockMatMul checks MatMul for every codec with its own kernels
// against the scalar reference (the float steps round each block's product,
// so the tolerance is a few float32 ulps of the sum of |terms|), and that
// every output is bit-identical whatever n, the row's place and the pool.
func TestBlockMatMul(t *testing.T) {
	pool := NewPool(3)
	defer pool.Close()
	for _, typ := range []DType{Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS} {
		c := CodecOf(typ)
		t.Run(c.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 7))
			const rows, n = 19, 5
			cols := 2 * 256
			w := &Mat{Rows: rows, Cols: cols, Type: typ, Q: randBlocks(rng, c, rows*cols/c.BlockSize)}
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			copy(x[cols:2*cols], make([]float32, cols)) // a zero row
			x[2*cols+5] = 1e4                           // an outlier
			out := make([]float32, n*rows)
			pool.MatMul(out, x, n, w)
			a := quantizeAct(c, x, n, cols)
			rb := c.RowBytes(cols)
			for i := 0; i < n; i++ {
				for r := 0; r < rows; r++ {
					want := refDot(c, w.Q[r*rb:(r+1)*rb], a, i, cols)
					// Σ|terms| bounds the float32 rounding of the block steps:
					// the scale and min terms of each group apart (they
					// cancel in the weight, not in the float steps).
					var mag float64
					bs := cols * n / len(a.d)
					for b := 0; b < cols/c.BlockSize; b++ {
						var u unpacked
						c.unpack(&u, w.Q[r*rb+b*c.BlockBytes:])
						for e := 0; e < c.BlockSize; e++ {
							k := i*cols + b*c.BlockSize + e
							xv := math.Abs(float64(a.q[k]) * float64(a.d[k/bs]))
							sc, mn := float64(u.sc[e/16]), float64(u.mn[e/16])
							if c.BlockSize == 32 { // d·q + m: no group scales
								sc, mn = 1, 1
							}
							mag += xv * math.Abs(float64(u.d)*sc*float64(u.q[e]))
							mag += xv * math.Abs(float64(u.dmin)*mn)
						}
					}
					if d := math.Abs(float64(out[i*rows+r]) - want); d > 1e-6*mag+1e-30 {
						t.Fatalf("row %d out %d: %v, reference %v (|Δ| %g, Σ|terms| %g)", i, r, out[i*rows+r], want, d, mag)
					}
				}
			}
			// Batch invariance: each activation row alone, nil pool.
			for i := 0; i < n; i++ {
				one := make([]float32, rows)
				(*Pool)(nil).MatMul(one, x[i*cols:(i+1)*cols], 1, w)
				for r := range one {
					if math.Float32bits(one[r]) != math.Float32bits(out[i*rows+r]) {
						t.Fatalf("row %d out %d: %v alone, %v in the batch", i, r, one[r], out[i*rows+r])
					}
				}
			}
		})
	}
}

// TestQuantizeQ8K checks the Q8_K activation quantizer against GGML's
// quantize_row_q8_K_ref on hand-made blocks: the scale is the signed value
// of largest magnitude over −127 (its first occurrence), values round half
// to even and the sums of 16 are exact.
func TestQuantizeQ8K(t *testing.T) {
	tests := []struct {
		name  string
		fill  func(x []float32)
		wantD float32
		check func(t *testing.T, q []int8)
	}{
		{"zeros", func(x []float32) {}, 0, func(t *testing.T, q []int8) {
			for _, v := range q {
				if v != 0 {
					t.Fatal("non-zero quant in a zero block")
				}
			}
		}},
		{"negative max", func(x []float32) { x[3], x[9] = -127, 2.5 }, 1 / (-127 / float32(-127)), func(t *testing.T, q []int8) {
			if q[3] != -127 || q[9] != 2 { // 2.5 → 2: half to even
				t.Fatalf("q[3] %d, q[9] %d; want -127, 2", q[3], q[9])
			}
		}},
		{"positive max first", func(x []float32) { x[0], x[1], x[2] = 254, -254, 3 }, 1 / (-127 / float32(254)), func(t *testing.T, q []int8) {
			if q[0] != -127 || q[1] != 127 || q[2] != -2 { // scale −2: 3·−0.5 = −1.5 → −2
				t.Fatalf("q %v; want -127 127 -2", q[:3])
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, 256)
			tc.fill(x)
			q := make([]int8, 256)
			bsum := make([]int32, 16)
			d := quantizeQ8K(q, bsum, x)
			if d != tc.wantD {
				t.Fatalf("d %v, want %v", d, tc.wantD)
			}
			tc.check(t, q)
			for g := 0; g < 16; g++ {
				var s int32
				for _, v := range q[16*g : 16*g+16] {
					s += int32(v)
				}
				if s != bsum[g] {
					t.Fatalf("bsum[%d] %d, want %d", g, bsum[g], s)
				}
			}
		})
	}
}

// TestPackedBlocks: a Q3_K, Q4_K, Q5_K or Q6_K matrix PackBlocks packed gives the bits
// of its GGML blocks (the Go reference, blockmm.go) at every level, for
// rows around the groups of 16 and their pairs (partial and odd last
// groups), random blocks with specials, several activation rows and both
// thread counts.
func TestPackedBlocks(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for _, typ := range []DType{Q3_K, Q4_K, Q5_K, Q6_K} {
		c := CodecOf(typ)
		t.Run(c.Name, func(t *testing.T) { testPackedBlocks(t, c, pool) })
	}
}

func testPackedBlocks(t *testing.T, c *Codec, pool *Pool) {
	eachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(91, 92))
		kernel := map[DType]bool{Q3_K: impl.q3k != nil, Q4_K: impl.q4k != nil, Q5_K: impl.q5k != nil, Q6_K: impl.q6k != nil}[c.Type]
		for _, s := range []struct{ rows, cols int }{{1, 256}, {15, 512}, {16, 256}, {17, 768}, {40, 256}, {64, 512}} {
			q := randBlocks(rng, c, s.rows*s.cols/256)
			ref := &Mat{Rows: s.rows, Cols: s.cols, Type: c.Type, Q: q}
			w := &Mat{Rows: s.rows, Cols: s.cols, Type: c.Type, Q: append([]byte(nil), q...)}
			PackBlocks(w)
			if (w.P != nil) != kernel || (w.Q == nil) != (w.P != nil) {
				t.Fatalf("PackBlocks: packed %v, GGML blocks kept %v, level has %s kernels %v", w.P != nil, w.Q != nil, c.Name, kernel)
			}
			for n := 1; n <= 9; n++ {
				x := randVec(rng, n*s.cols)
				x[3] = 1e4
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
	})
}

// BenchmarkMatMulBlocks compares, per format and n, MatMul on a 2048×2048
// matrix of random blocks (one thread): the block formats on their GGML
// blocks (Go) and packed (at levels with their kernels), beside packed
// Q8_0. GB/cpu-s counts the weight bytes read.
// Run: go test -run '^$' -bench MatMulBlocks ./internal/tensor
func BenchmarkMatMulBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	const rows, cols = 2048, 2048
	mats := []struct {
		name string
		w    *Mat
	}{{"q8_0-packed", packedMat(quantizeMat(rows, cols, randVec(rng, rows*cols)))}}
	for _, typ := range []DType{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, Q4_1, Q5_0, Q5_1, IQ4_NL} {
		c := CodecOf(typ)
		q := randBlocks(rng, c, rows*cols/c.BlockSize)
		mats = append(mats, struct {
			name string
			w    *Mat
		}{c.Name + "-go", &Mat{Rows: rows, Cols: cols, Type: typ, Q: q}})
		w := &Mat{Rows: rows, Cols: cols, Type: typ, Q: append([]byte(nil), q...)}
		if PackBlocks(w); w.P != nil {
			mats = append(mats, struct {
				name string
				w    *Mat
			}{c.Name + "-packed", w})
		}
	}
	for _, n := range []int{1, 16} {
		x := randVec(rng, n*cols)
		out := make([]float32, n*rows)
		for _, m := range mats {
			b.Run(fmt.Sprintf("n=%d/%s", n, m.name), func(b *testing.B) {
				p := NewPool(1)
				defer p.Close()
				cpu0 := cputime.Process()
				for b.Loop() {
					p.MatMul(out, x, n, m.w)
				}
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(float64(len(m.w.Q)+len(m.w.P))*float64(b.N)/cpu.Seconds()/1e9, "GB/cpu-s")
					b.ReportMetric(2*float64(n*rows*cols)*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
				}
			})
		}
	}
}

// TestBlockMatMulLevels: MatMul on GGML blocks gives the go level's bits
// at every level (their integer sums are exact; the float steps are Go).
func TestBlockMatMulLevels(t *testing.T) {
	for _, typ := range []DType{Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS} {
		c := CodecOf(typ)
		rng := rand.New(rand.NewPCG(uint64(typ), 9))
		const rows, n, cols = 7, 3, 512
		w := &Mat{Rows: rows, Cols: cols, Type: typ, Q: randBlocks(rng, c, rows*cols/c.BlockSize)}
		x := make([]float32, n*cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		want := make([]float32, n*rows)
		saved := impl
		impl = goKernels
		(*Pool)(nil).MatMul(want, x, n, w)
		impl = saved
		t.Run(c.Name, func(t *testing.T) {
			eachImpl(t, func(t *testing.T) {
				got := make([]float32, n*rows)
				(*Pool)(nil).MatMul(got, x, n, w)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("out %d: %v, go level %v", i, got[i], want[i])
					}
				}
			})
		})
	}
}
