package tensor

import (
	"bytes"
	"fmt"
	"govllm/internal/cputime"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// quantizeQ4Mat returns src (rows×cols) as a Q4_0 matrix in GGML blocks.
func quantizeQ4Mat(rows, cols int, src []float32) *Mat {
	q := make([]byte, rows*Q4RowBytes(cols))
	QuantizeQ4_0(q, src)
	return &Mat{Rows: rows, Cols: cols, Type: Q4_0, Q: q}
}

// expandedMat returns the exact Q8_0 expansion of a Q4_0 matrix in GGML
// blocks (w is left as it is).
func expandedMat(w *Mat) *Mat {
	e := &Mat{Rows: w.Rows, Cols: w.Cols, Type: Q4_0, Q: bytes.Clone(w.Q)}
	ExpandQ4(e)
	return e
}

func TestQuantizeQ4_0(t *testing.T) {
	// Values with the GGML rounding worked out by hand: the block's value
	// of largest magnitude m gives d = m/−8, then q = min(15, trunc(x/d+8.5)).
	blk := func(v ...float32) []float32 {
		x := make([]float32, 32)
		copy(x, v)
		return x
	}
	for _, tc := range []struct {
		name  string
		x     []float32
		d     float32
		nibs  map[int]byte // element → nibble (others: value 0 → 8)
		zeroD bool
	}{
		{"positive max", blk(8, 4, -4, 1), -1, map[int]byte{0: 0, 1: 4, 2: 12, 3: 7}, false},
		{"negative max", blk(-8, 4, -4, 7.9), 1, map[int]byte{0: 0, 1: 12, 2: 4, 3: 15}, false},
		{"first of equal magnitudes", blk(2, -2), -0.25, map[int]byte{0: 0, 1: 16 - 1}, false},
		{"all zero", blk(), 0, nil, true},
		{"high half", blk(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -16, 8), 2, map[int]byte{16: 0, 17: 12}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := make([]byte, Q4BlockBytes+1)
			q[Q4BlockBytes] = 0xee
			QuantizeQ4_0(q, tc.x)
			if q[Q4BlockBytes] != 0xee {
				t.Fatal("wrote past the block")
			}
			if d := F16ToF32(uint16(q[0]) | uint16(q[1])<<8); d != tc.d {
				t.Fatalf("scale %v, want %v", d, tc.d)
			}
			for j := 0; j < 32; j++ {
				want, ok := tc.nibs[j]
				if !ok {
					want = 8
				}
				if tc.name == "first of equal magnitudes" && j == 1 {
					want = 15 // -2/-0.25 + 8.5 = 16.5 → 16 → min 15
				}
				got := q[2+j%16] & 15
				if j >= 16 {
					got = q[2+j%16] >> 4
				}
				if got != want {
					t.Fatalf("element %d: nibble %d, want %d", j, got, want)
				}
			}
		})
	}
	t.Run("random blocks as quantize_row_q4_0_ref", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(63, 64))
		x := randVec(rng, 200*32)
		for i := 0; i < len(x); i += 7 {
			x[i] = float32(math.Round(float64(x[i]) * 4)) // ties and equal magnitudes
		}
		got := make([]byte, 200*Q4BlockBytes)
		QuantizeQ4_0(got, x)
		for b := 0; b < 200; b++ {
			if want := quantizeQ4Ref(x[b*32 : (b+1)*32]); !bytes.Equal(got[b*18:(b+1)*18], want) {
				t.Fatalf("block %d: % x, want % x", b, got[b*18:(b+1)*18], want)
			}
		}
	})
	t.Run("special values as quantize_row_q4_0_ref", func(t *testing.T) {
		// GGML skips NaN in the search for the largest magnitude
		// (amax < |NaN| is false) and starts it from max = +0, so a block
		// of zeros (of either sign) gets d = +0/−8 = −0.
		nan, inf := float32(math.NaN()), float32(math.Inf(1))
		negz := float32(math.Copysign(0, -1))
		den := math.Float32frombits(1) // the smallest denormal
		for _, tc := range []struct {
			name string
			x    []float32
		}{
			{"-0 first, zeros", blk(negz)},
			{"all -0", blk(negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz,
				negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz, negz)},
			{"NaN among values", blk(1, nan, -3, 2)},
			{"NaN first", blk(nan, 0.5, -0.25)},
			{"NaN and zeros", blk(0, nan)},
			{"NaN and -0", blk(negz, nan)},
			{"+Inf", blk(1, inf, -2)},
			{"-Inf first of equals", blk(-inf, inf, 3)},
			{"Inf and NaN", blk(nan, inf)},
			{"denormals", blk(den, -den, 3*den)},
			{"tiny scale (1/d overflows)", blk(1e-38, -5e-39, 2e-39)},
			{"ties at half steps", blk(-8, 0.5, -0.5, 1.5, -1.5, 7.5, -7.5)},
		} {
			got := make([]byte, Q4BlockBytes)
			QuantizeQ4_0(got, tc.x)
			if want := quantizeQ4Ref(tc.x); !bytes.Equal(got, want) {
				t.Errorf("%s: % x, want % x", tc.name, got, want)
			}
		}
	})
	t.Run("round trip error", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(51, 52))
		x := randVec(rng, 64*32)
		q := make([]byte, 64*Q4BlockBytes)
		QuantizeQ4_0(q, x)
		y := make([]float32, len(x))
		DequantizeQ4_0(y, q)
		for b := 0; b < 64; b++ {
			d := math.Abs(float64(F16ToF32(uint16(q[b*18]) | uint16(q[b*18+1])<<8)))
			for j := b * 32; j < (b+1)*32; j++ {
				// Half a step, but a whole one where 15 clamps +8 steps.
				if e := math.Abs(float64(x[j] - y[j])); e > d*0.51 && !(e <= d*1.01 && math.Abs(float64(x[j])) > 7.4*d) {
					t.Fatalf("block %d element %d: %v → %v (d %v)", b, j, x[j], y[j], d)
				}
			}
		}
	})
}

// q4SpecialBlocks returns blocks for the Q4_0 quantizer tests: random ones
// at several scales (with ties and equal magnitudes), a NaN in every
// position, ±0, ±Inf, denormals, scales whose inverse overflows or that
// round to 0, float16 rounding of the scale and exact half steps.
func q4SpecialBlocks() [][]float32 {
	rng := rand.New(rand.NewPCG(71, 72))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negz := float32(math.Copysign(0, -1))
	den := math.Float32frombits(1)
	rnd := func(scale float64) []float32 {
		x := make([]float32, 32)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		return x
	}
	fill := func(v float32) []float32 {
		x := make([]float32, 32)
		for i := range x {
			x[i] = v
		}
		return x
	}
	var blocks [][]float32
	for _, scale := range []float64{1, 1e-3, 1e-30, 1e-38, 1e-40, 1e-44, 6e-5, 1e-7, 1e4, 1e5, 1e38} {
		blocks = append(blocks, rnd(scale))
	}
	for range 8 {
		x := rnd(2)
		for i := range x {
			x[i] = float32(math.Round(float64(x[i])*2) / 2) // ties and equal magnitudes
		}
		blocks = append(blocks, x)
	}
	for p := range 32 {
		x := rnd(1)
		x[p] = nan
		blocks = append(blocks, x)
		y := make([]float32, 32) // NaN among zeros, the first of them −0
		y[p], y[(p+1)%32] = nan, negz
		blocks = append(blocks, y)
		z := rnd(1)
		z[p], z[(p+5)%32] = inf, -nan
		blocks = append(blocks, z)
		w := rnd(1)
		w[p], w[(p+17)%32] = -inf, inf
		blocks = append(blocks, w)
		v := rnd(1) // equal magnitudes of both signs, the first at p
		v[p], v[(p+9)%32] = -5, 5
		blocks = append(blocks, v)
	}
	blocks = append(blocks, fill(nan), fill(0), fill(negz), fill(inf), fill(-inf), fill(den), fill(-den))
	mix := make([]float32, 32) // ±0 alternating, −0 first
	for i := range mix {
		mix[i] = float32(math.Copysign(0, float64(i%2)-0.5))
	}
	blocks = append(blocks, mix)
	for _, m := range []float32{den, 3 * den, 4 * den, 5 * den, 8 * den, 9 * den, 100 * den,
		math.Float32frombits(0x00400000), math.Float32frombits(0x00800000), math.Float32frombits(0x01000000),
		math.Float32frombits(0x00ffffff), 1e-38, 65504 * 8, 65520 * 8, 65536 * 8, math.MaxFloat32,
		6.1e-5 * 8, 5.96e-8 * 8, 2.98e-8 * 8, 1e-9} {
		for _, sign := range []float32{1, -1} {
			x := rnd(1)
			for i := range x { // |x| < m: scaled into (−m, m)
				x[i] = float32(float64(sign*m) * math.Tanh(float64(x[i])) * 0.999)
			}
			x[int(rng.IntN(32))] = sign * m
			blocks = append(blocks, x)
		}
	}
	for _, dir := range []float32{0, -1, 1} { // exact half steps (d = ∓1) and one ulp either side
		for _, m := range []float32{8, -8} {
			x := make([]float32, 32)
			for i := range x {
				v := float32(i%16-8) + 0.5
				if dir != 0 {
					v = math.Nextafter32(v, v+dir)
				}
				x[i] = v
			}
			x[0] = m
			blocks = append(blocks, x)
		}
	}
	return blocks
}

// TestQuantizeQ4_0Levels: at every level, QuantizeQ4_0 gives the bytes of
// quantizeQ4Go and of quantize_row_q4_0_ref for 1..70 blocks of specials
// and random values, writing nothing else.
func TestQuantizeQ4_0Levels(t *testing.T) {
	blocks := q4SpecialBlocks()
	var x []float32
	for _, b := range blocks {
		x = append(x, b...)
	}
	nb := len(blocks)
	want := make([]byte, nb*Q4BlockBytes)
	quantizeQ4Go(want, x)
	for b := range nb {
		if ref := quantizeQ4Ref(blocks[b]); !bytes.Equal(want[b*18:(b+1)*18], ref) {
			t.Fatalf("quantizeQ4Go block %d: % x, want % x (%v)", b, want[b*18:(b+1)*18], ref, blocks[b])
		}
	}
	eachQ4Impl(t, func(t *testing.T) {
		check := func(b0, n int) {
			t.Helper()
			buf := make([]byte, 1+n*Q4BlockBytes+2)
			for i := range buf {
				buf[i] = 0xa5
			}
			QuantizeQ4_0(buf[1:1+n*Q4BlockBytes], x[b0*32:(b0+n)*32])
			if buf[0] != 0xa5 || buf[len(buf)-2] != 0xa5 || buf[len(buf)-1] != 0xa5 {
				t.Fatalf("blocks [%d,%d): wrote outside dst", b0, b0+n)
			}
			got := buf[1 : 1+n*Q4BlockBytes]
			for b := range n {
				if g, w := got[b*18:(b+1)*18], want[(b0+b)*18:(b0+b+1)*18]; !bytes.Equal(g, w) {
					t.Fatalf("block %d of [%d,%d): % x, want % x (%v)", b0+b, b0, b0+n, g, w, blocks[b0+b])
				}
			}
		}
		check(0, nb)
		for n := 1; n <= 70; n++ {
			check((n*37)%(nb-n+1), n)
		}
	})
}

// quantizeQ4Ref is GGML's quantize_row_q4_0_ref for one block, written
// plainly.
func quantizeQ4Ref(x []float32) []byte {
	var amax, m float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); amax < a {
			amax, m = a, v
		}
	}
	d := m / -8
	var id float32
	if d != 0 {
		id = 1 / d
	}
	h := F32ToF16(d)
	out := []byte{byte(h), byte(h >> 8)}
	for j := 0; j < 16; j++ {
		x0, x1 := float32(x[j]*id), float32(x[16+j]*id)
		q0, q1 := min(15, int8(x0+8.5)), min(15, int8(x1+8.5))
		out = append(out, byte(q0)|byte(q1)<<4)
	}
	return out
}

func TestExpandQ4Exact(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for _, s := range []struct{ rows, cols int }{{1, 32}, {17, 96}, {40, 256}} {
		w := quantizeQ4Mat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
		want := make([]float32, s.rows*s.cols)
		DequantizeQ4_0(want, w.Q)
		for _, packed := range []bool{false, true} {
			e := &Mat{Rows: w.Rows, Cols: w.Cols, Type: Q4_0, Q: bytes.Clone(w.Q)}
			if packed {
				e = &Mat{Rows: w.Rows, Cols: w.Cols, Type: Q4_0, P: packQ4(w.Q, w.Rows, w.Cols)}
			}
			ExpandQ4(e)
			if e.Type != Q8_0 || e.P != nil || len(e.Q) != s.rows*Q8RowBytes(s.cols) {
				t.Fatalf("%dx%d packed=%v: ExpandQ4 gave type %v, %d bytes", s.rows, s.cols, packed, e.Type, len(e.Q))
			}
			got := make([]float32, len(want))
			DequantizeQ8_0(got, e.Q)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d packed=%v: weight %d = %v, want %v", s.rows, s.cols, packed, i, got[i], want[i])
				}
			}
		}
	}
}

// q4Ref is packed Q4_0's canonical order for the rows×cols Q4_0 blocks q
// and n activation rows x: per output, per block, I = Σ x·(q−8) exact and
// acc += float32(I)·(dw·dx), fused (the avx512 kernels) or with the product
// rounded first (the go level); x quantized as MatMul does.
func q4Ref(q []byte, rows, cols int, x []float32, n int, fused bool) []float32 {
	nb := cols / 32
	xq, xd, out := quantizedRows(x, n, rows, cols)
	for i := 0; i < n; i++ {
		for r := 0; r < rows; r++ {
			var acc float32
			for b := 0; b < nb; b++ {
				blk := q[(r*nb+b)*Q4BlockBytes:]
				var is int32
				for t := 0; t < 16; t++ {
					is += int32(xq[i*cols+32*b+t])*(int32(blk[2+t]&15)-8) + int32(xq[i*cols+32*b+16+t])*(int32(blk[2+t]>>4)-8)
				}
				d := F16ToF32(uint16(blk[0])|uint16(blk[1])<<8) * xd[i*nb+b]
				if fused {
					acc = fma32(float32(is), d, acc)
				} else {
					acc += float32(float32(is) * d)
				}
			}
			out[i*rows+r] = acc
		}
	}
	return out
}

// TestMatMulQ4PackedBitIdentical: a packed Q4_0 matrix gives the bits of
// q4Ref (fused where the level has packed Q4_0 kernels), at every level,
// for shapes around the kernels' group counts (8 groups for the wide
// one-row kernel, partial last groups), block counts around the prefetch
// distance (8), activation counts around the tiles (4 rows) and both
// thread counts; and a matrix PackQ4 made gives the bits of the expansion
// PackQ8 made (at a level without packed Q8_0, avx2, its GGML-layout
// kernels' bits).
func TestMatMulQ4PackedBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 58))
	pools := map[string]*Pool{"nil": nil, "2": NewPool(2)}
	defer pools["2"].Close()
	defer func(v int) { q4pUnpackMin = v }(q4pUnpackMin)
	eachQ4Impl(t, func(t *testing.T) {
		for _, s := range []struct{ rows, cols int }{
			{1, 32}, {3, 64}, {16, 224}, {33, 256}, {64, 288}, {71, 96}, {128, 512}, {200, 768}, {130, 2048}, {400, 64},
		} {
			w4 := quantizeQ4Mat(s.rows, s.cols, randVec(rng, s.rows*s.cols))
			w8api := expandedMat(w4)
			PackQ8(w8api) // what PackQ4 makes at a level without Q4_0 kernels
			wp := &Mat{Rows: s.rows, Cols: s.cols, Type: Q4_0, P: packQ4(w4.Q, s.rows, s.cols)}
			api := &Mat{Rows: s.rows, Cols: s.cols, Type: Q4_0, Q: bytes.Clone(w4.Q)}
			PackQ4(api)
			wantType := Q8_0
			if impl.q4p {
				wantType = Q4_0
			}
			if api.Type != wantType || api.P == nil && impl.q8p != nil {
				t.Fatalf("%dx%d: PackQ4 made a %v matrix (packed %v), want %v", s.rows, s.cols, api.Type, api.P != nil, wantType)
			}
			for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 16, 17, 33, 36} {
				x := randVec(rng, n*s.cols)
				for _, um := range []int{8, math.MaxInt} { // tiles on unpacked weights from 8 rows, or never
					q4pUnpackMin = um
					for name, p := range pools {
						// A level without packed Q4_0 kernels runs a matrix
						// packed elsewhere in q8pRowsGo: the go level's bits.
						want, wantAPI := q4Ref(w4.Q, s.rows, s.cols, x, n, impl.q4p), make([]float32, n*s.rows)
						p.MatMul(wantAPI, x, n, w8api)
						if impl.q4p { // PackQ4 packed it as Q4_0
							wantAPI = want
						}
						for _, l := range []struct {
							name string
							w    *Mat
							want []float32
						}{{"packed", wp, want}, {"PackQ4", api, wantAPI}} {
							got := make([]float32, n*s.rows+3)
							got[n*s.rows] = 12345
							p.MatMul(got, x, n, l.w)
							if got[n*s.rows] != 12345 {
								t.Fatalf("%dx%d n=%d pool=%s %s: wrote past the outputs", s.rows, s.cols, n, name, l.name)
							}
							for i, v := range l.want {
								if math.Float32bits(got[i]) != math.Float32bits(v) {
									t.Fatalf("%dx%d n=%d pool=%s %s unpackMin=%d: out[%d][%d] = %v, Q8_0 expansion %v",
										s.rows, s.cols, n, name, l.name, um, i/s.rows, i%s.rows, got[i], v)
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestMatMulQ4GGML: MatMul on Q4_0 GGML blocks (not packed) gives the go
// level's bits of q4Ref, and is close to the float64 product.
func TestMatMulQ4GGML(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 60))
	p := NewPool(2)
	defer p.Close()
	for _, s := range []struct{ rows, cols int }{{1, 32}, {7, 96}, {45, 256}, {130, 512}} {
		for _, n := range []int{1, 3, 5} {
			wf := randVec(rng, s.rows*s.cols)
			w4 := quantizeQ4Mat(s.rows, s.cols, wf)
			x := randVec(rng, n*s.cols)
			want := q4Ref(w4.Q, s.rows, s.cols, x, n, false)
			for _, pool := range []*Pool{nil, p} {
				got := make([]float32, n*s.rows)
				pool.MatMul(got, x, n, w4)
				for i, v := range want {
					if math.Float32bits(got[i]) != math.Float32bits(v) {
						t.Fatalf("%dx%d n=%d: out[%d] = %v, want %v", s.rows, s.cols, n, i, got[i], v)
					}
				}
			}
			wd := make([]float32, len(wf))
			DequantizeQ4_0(wd, w4.Q)
			xq := make([]byte, n*s.cols/32*34)
			QuantizeQ8_0(xq, x)
			xd := make([]float32, len(x))
			DequantizeQ8_0(xd, xq)
			checkClose(t, want, refMatMul64(xd, wd, n, s.rows, s.cols), s.cols, 1)
		}
	}
}

// TestQ4BadArguments: malformed Q4_0 matrices and buffers panic with a
// message naming the function.
func TestQ4BadArguments(t *testing.T) {
	q := func(rows, cols, nbytes int) *Mat {
		return &Mat{Rows: rows, Cols: cols, Type: Q4_0, Q: make([]byte, nbytes)}
	}
	for _, tc := range []struct {
		name, want string
		f          func()
	}{
		{"PackQ4 cols%32", "PackQ4", func() { PackQ4(q(2, 48, 2*Q4RowBytes(64))) }},
		{"PackQ4 short", "PackQ4", func() { PackQ4(q(2, 64, 2*Q4RowBytes(64)-1)) }},
		{"ExpandQ4 short", "ExpandQ4", func() { ExpandQ4(q(3, 32, 2*Q4BlockBytes)) }},
		{"MatMul GGML short", "MatMul", func() {
			(*Pool)(nil).MatMul(make([]float32, 2), make([]float32, 64), 1, q(2, 64, 3*Q4BlockBytes))
		}},
		{"MatMul packed short", "packed Q4_0", func() {
			w := &Mat{Rows: 17, Cols: 64, Type: Q4_0, P: make([]byte, q4PackedBytes(16, 64))}
			(*Pool)(nil).MatMul(make([]float32, 17), make([]float32, 64), 1, w)
		}},
		{"MatMul short x", "MatMul", func() {
			(*Pool)(nil).MatMul(make([]float32, 2), make([]float32, 63), 1, q(2, 64, 2*Q4RowBytes(64)))
		}},
		{"QuantizeQ4_0 length", "QuantizeQ4_0", func() { QuantizeQ4_0(make([]byte, 100), make([]float32, 33)) }},
		{"DequantizeQ4_0 length", "DequantizeQ4_0", func() { DequantizeQ4_0(make([]float32, 33), make([]byte, 100)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Fatalf("panic %v, want one naming %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
	// Other types are left alone.
	f := &Mat{Rows: 1, Cols: 32, Type: F32, F32: make([]float32, 32)}
	PackQ4(f)
	ExpandQ4(f)
	UnpackQ4(f)
	if f.Type != F32 || f.P != nil || f.Q != nil {
		t.Fatal("Q4 functions changed an F32 matrix")
	}
}

// TestMatMulQ4PackedAllocs: a packed Q4_0 MatMul allocates nothing once
// the pool's scratch has grown.
func TestMatMulQ4PackedAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	rows, cols := 300, 256
	w4 := quantizeQ4Mat(rows, cols, randVec(rng, rows*cols))
	w := &Mat{Rows: rows, Cols: cols, Type: Q4_0, P: packQ4(w4.Q, rows, cols)}
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		for _, n := range []int{1, 5, 9, 49} {
			x := randVec(rng, n*cols)
			out := make([]float32, n*rows)
			p.MatMul(out, x, n, w)
			if a := testing.AllocsPerRun(20, func() { p.MatMul(out, x, n, w) }); a != 0 {
				t.Errorf("threads=%d n=%d: %v allocations per MatMul", threads, n, a)
			}
		}
		p.Close()
	}
}

// BenchmarkMatMulQ4Packed compares, one thread, interleaved, MatMul on a
// packed Q4_0 matrix (layout=q4_0) with its exact Q8_0 expansion packed
// (layout=q8_0; the same bits) and, from q4pUnpackMin rows, with the tiles unpacking
// the nibbles in registers (q4_0-nounpack), each call taking the next of several
// copies of the matrix so that the weights come from DRAM as in a model's
// forward pass (5632×2048: 64 copies, 740 MB of Q8_0 and 415 MB of Q4_0,
// more than the L3). Reports GFLOP/cpu-s and the weight bytes read per
// CPU-second and per second.
// Run: go test -run '^$' -bench MatMulQ4Packed ./internal/tensor
func BenchmarkMatMulQ4Packed(b *testing.B) {
	if !impl.q4p {
		b.Skip("no packed Q4_0 kernels at this level")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, cols, copies = 5632, 2048, 64
	w4 := quantizeQ4Mat(rows, cols, randVec(rng, rows*cols))
	w8 := packedMat(expandedMat(w4))
	layouts := []struct {
		name      string
		ws        []*Mat
		unpackMin int
	}{{"q8_0", nil, q4pUnpackMin}, {"q4_0", nil, q4pUnpackMin}, {"q4_0-nounpack", nil, math.MaxInt}}
	for c := 0; c < copies; c++ {
		layouts[0].ws = append(layouts[0].ws, &Mat{Rows: rows, Cols: cols, Type: Q8_0, P: append(alignedBytes(0, 64), w8.P...)})
		layouts[1].ws = append(layouts[1].ws, &Mat{Rows: rows, Cols: cols, Type: Q4_0, P: packQ4(w4.Q, rows, cols)})
	}
	layouts[2].ws = layouts[1].ws
	def := q4pUnpackMin
	defer func() { q4pUnpackMin = def }()
	for _, n := range []int{1, 4, 16, 32, 64} {
		x := randVec(rng, n*cols)
		out := make([]float32, n*rows)
		flops := 2 * float64(n) * float64(rows) * float64(cols)
		for _, l := range layouts {
			if n < def && l.unpackMin != def {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, l.name), func(b *testing.B) {
				q4pUnpackMin = l.unpackMin
				p := NewPool(1)
				defer p.Close()
				cpu0 := cputime.Process()
				i := 0
				for b.Loop() {
					p.MatMul(out, x, n, l.ws[i%copies])
					i++
				}
				nbytes := float64(len(l.ws[0].P)) * float64(b.N)
				b.ReportMetric(nbytes/b.Elapsed().Seconds()/1e9, "GB/s")
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					b.ReportMetric(nbytes/cpu.Seconds()/1e9, "GB/cpu-s")
				}
			})
		}
	}
}

// BenchmarkQuantizeQ4_0 measures the load-time quantizer (GB of F32 input
// per CPU-second), which makes the Q4_0 dummy models and --quantization
// q4_0.
func BenchmarkQuantizeQ4_0(b *testing.B) {
	rng := rand.New(rand.NewPCG(65, 66))
	x := randVec(rng, 1<<20)
	q := make([]byte, len(x)/32*Q4BlockBytes)
	cpu0 := cputime.Process()
	for b.Loop() {
		QuantizeQ4_0(q, x)
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(4*float64(len(x))*float64(b.N)/cpu.Seconds()/1e9, "GB/cpu-s")
	}
}
