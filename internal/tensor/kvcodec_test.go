package tensor

import (
	"math"
	"testing"
)

// f16Cases are float32 inputs of the half-precision conversion: zeros,
// the largest half (65504) and what rounds to it or overflows to Inf
// (65520 is the tie between 65504 and 65536), Inf, NaNs (quiet,
// signalling, with payload), the smallest subnormal half 2^-24 and the
// ties around it (2^-25 rounds to 0, 3·2^-25 to 2·2^-24), normal ties
// to even (1 + 2^-11 → 1, 1 + 3·2^-11 → 1 + 2^-9), the smallest normal
// half and float32 subnormals (to ±0).
var f16Cases = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.1, -3.14159, 65504, 65519.99, 65520, -65520, 70000, 1e30,
	float32(math.Inf(1)), float32(math.Inf(-1)),
	math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001),
	math.Float32frombits(0x7fa5a5a5),
	0x1p-24, 0x1p-25, 3 * 0x1p-25, -0x1p-25, 0x1.8p-24, 5 * 0x1p-26, 0x1p-14, 0x1.ffcp-15, 0x1p-20 + 0x1p-25,
	1 + 0x1p-11, 1 + 3*0x1p-11, 1 + 0x1p-11 + 0x1p-23, 2049, 2051, -2051,
	math.Float32frombits(1), math.Float32frombits(0x807fffff),
}

// f16Inputs is f16Cases, every half's value and every midpoint between
// consecutive halves (the ties), and a spread of other bit patterns.
func f16Inputs() []float32 {
	x := append([]float32{}, f16Cases...)
	for h := range 1 << 16 {
		v := F16ToF32(uint16(h))
		x = append(x, v)
		if next := F16ToF32(uint16(h + 1)); h&0x7fff < 0x7c00 && h+1 < 1<<16 {
			x = append(x, float32((float64(v)+float64(next))/2))
		}
	}
	for i := range 1 << 16 {
		x = append(x, math.Float32frombits(uint32(i)*2654435761))
	}
	return x
}

// TestF16Encode checks EncodeF16, with F16C and in Go, against
// F32ToF16 (round to nearest even), and the named cases against their
// known halves.
func TestF16Encode(t *testing.T) {
	want := map[float32]uint16{0: 0, 1: 0x3c00, 65504: 0x7bff, 65519.99: 0x7bff, 65520: 0x7c00, -65520: 0xfc00,
		70000: 0x7c00, 0x1p-24: 1, 0x1p-25: 0, 3 * 0x1p-25: 2, 5 * 0x1p-26: 1, 0x1p-14: 0x400,
		1 + 0x1p-11: 0x3c00, 1 + 3*0x1p-11: 0x3c02, 1 + 0x1p-11 + 0x1p-23: 0x3c01, 2049: 0x6800, 2051: 0x6802}
	for x, h := range want {
		if got := F32ToF16(x); got != h {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", x, got, h)
		}
	}
	x := f16Inputs()
	ref := make([]uint16, len(x))
	for i, v := range x {
		ref[i] = F32ToF16(v)
	}
	forF16Paths(t, func(t *testing.T) {
		for _, n := range []int{len(x), 13, 8, 7, 1} {
			dst := make([]byte, 2*n)
			EncodeF16(dst, x[:n])
			for i := range n {
				if h := uint16(dst[2*i]) | uint16(dst[2*i+1])<<8; h != ref[i] {
					t.Fatalf("n=%d: %g (%#08x) → %#04x, want %#04x", n, x[i], math.Float32bits(x[i]), h, ref[i])
				}
			}
		}
	})
}

// TestF16Decode decodes every half, with F16C and in Go: exact values
// (F16ToF32's), NaNs quiet.
func TestF16Decode(t *testing.T) {
	src := make([]byte, 2<<16)
	for h := range 1 << 16 {
		src[2*h], src[2*h+1] = byte(h), byte(h>>8)
	}
	forF16Paths(t, func(t *testing.T) {
		dst := make([]float32, 1<<16)
		DecodeF16(dst, src)
		for h := range 1 << 16 {
			want := math.Float32bits(F16ToF32(uint16(h)))
			if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
				want |= 1 << 22
			}
			if got := math.Float32bits(dst[h]); got != want {
				t.Fatalf("%#04x → %#08x, want %#08x", h, got, want)
			}
		}
	})
}

// forF16Paths runs f with the F16C conversion (when the CPU has it) and
// with the Go one.
func forF16Paths(t *testing.T, f func(t *testing.T)) {
	saved := f16Conv
	defer func() { f16Conv = saved }()
	if saved != nil {
		t.Run("f16c", f)
	}
	f16Conv = nil
	t.Run("go", f)
}

// TestKVCodecs round-trips rows through each format against the values
// the format keeps: float32 exactly, F16 as F32ToF16 rounds, Q8_0 as
// GGML's reference quantizer and dequantizer (QuantizeQ8_0's tests).
func TestKVCodecs(t *testing.T) {
	x := make([]float32, 96)
	for i := range x {
		x[i] = float32((i*7919)%201-100) / 37
	}
	q := make([]byte, 3*Q8BlockBytes)
	QuantizeQ8_0(q, x)
	q8 := make([]float32, len(x))
	DequantizeQ8_0(q8, q)
	for _, c := range []struct {
		codec *KVCodec
		bytes int
		want  func(i int) float32
	}{
		{KVF32, 384, func(i int) float32 { return x[i] }},
		{KVF16, 192, func(i int) float32 { return F16ToF32(F32ToF16(x[i])) }},
		{KVQ8_0, 102, func(i int) float32 { return q8[i] }},
	} {
		if got := c.codec.RowBytes(len(x)); got != c.bytes {
			t.Errorf("%s: RowBytes(96) = %d, want %d", c.codec.Name, got, c.bytes)
		}
		r := append([]float32{}, x...)
		c.codec.Round(r)
		for i, v := range r {
			if math.Float32bits(v) != math.Float32bits(c.want(i)) {
				t.Fatalf("%s: value %d = %g, want %g", c.codec.Name, i, v, c.want(i))
			}
		}
	}
}

// TestKVQ8Decode decodes random Q8_0 blocks (every scale pattern, NaN
// and Inf included) with AVX2 and in Go, against DequantizeQ8_0's bits.
func TestKVQ8Decode(t *testing.T) {
	const nb = 3000
	src := make([]byte, nb*Q8BlockBytes)
	x := uint32(1)
	for i := range src {
		x = x*1664525 + 1013904223
		src[i] = byte(x >> 24)
	}
	want := make([]float32, nb*Q8BlockSize)
	DequantizeQ8_0(want, src)
	forF16Paths(t, func(t *testing.T) {
		for _, n := range []int{nb, 1, 2} {
			got := make([]float32, n*Q8BlockSize)
			KVQ8_0.Decode(got, src)
			for i, v := range got {
				if math.Float32bits(v) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d: value %d = %#08x, want %#08x", n, i, math.Float32bits(v), math.Float32bits(want[i]))
				}
			}
		}
	})
}

// TestKVDecodeRows: DecodeRows (one kernel call for all rows, with F16C
// and AVX2, and the Go loop) gives Decode's bits row by row, rows read
// with a stride past their length.
func TestKVDecodeRows(t *testing.T) {
	const n, rows = 64, 5
	for _, c := range []*KVCodec{KVF32, KVF16, KVQ8_0} {
		rb := c.RowBytes(n)
		stride := 3*rb + 7
		src := make([]byte, (rows-1)*stride+rb)
		x := make([]float32, n)
		for r := range rows {
			for i := range x {
				x[i] = float32((r*n+i)*7919%201-100) / 37
			}
			c.Encode(src[r*stride:], x)
		}
		want := make([]float32, rows*n)
		for r := range rows {
			c.Decode(want[r*n:(r+1)*n], src[r*stride:])
		}
		forF16Paths(t, func(t *testing.T) {
			got := make([]float32, rows*n)
			c.DecodeRows(got, src, n, rows, stride)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: value %d = %g, want %g", c.Name, i, got[i], want[i])
				}
			}
		})
	}
}
