package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestF32ToF16RoundTripsEveryHalf(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		got := F32ToF16(f)
		if f != f { // NaN: must stay a NaN
			if got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("NaN %#04x -> %#04x", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, got)
		}
	}
}

func TestF32ToF16RoundsToNearestEven(t *testing.T) {
	// The midpoint between two adjacent finite halves of one sign is exact in
	// float32; it must round to the even one. Just off the midpoint rounds to
	// the nearer one.
	for h := 0; h < 0x7bff; h++ {
		lo, hi := float64(F16ToF32(uint16(h))), float64(F16ToF32(uint16(h+1)))
		mid := float32((lo + hi) / 2)
		want := uint16(h)
		if h&1 == 1 {
			want = uint16(h + 1)
		}
		for _, sign := range []uint16{0, 0x8000} {
			m := mid
			if sign != 0 {
				m = -m
			}
			if got := F32ToF16(m); got != want|sign {
				t.Fatalf("midpoint %v of %#04x,%#04x -> %#04x, want %#04x", m, h, h+1, got, want|sign)
			}
			below := math.Nextafter32(m, 0)
			if got := F32ToF16(below); got != uint16(h)|sign {
				t.Fatalf("%v just inside midpoint of %#04x -> %#04x", below, h, got)
			}
		}
	}
	cases := []struct {
		f    float32
		want uint16
	}{
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to Inf
		{1e10, 0x7c00},
		{-1e10, 0xfc00},
		{float32(math.Inf(1)), 0x7c00},
		{1e-10, 0},
		{float32(math.Copysign(0, -1)), 0x8000}, // negative zero keeps its sign
		{5.960464477539063e-08, 1},              // smallest subnormal
		{2.98e-08, 0},                           // below half of it
		{2.99e-08, 1},                           // above half of it
	}
	for _, c := range cases {
		if got := F32ToF16(c.f); got != c.want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

func TestQuantizeQ8_0(t *testing.T) {
	t.Run("known block", func(t *testing.T) {
		src := make([]float32, 32)
		for i := range src {
			src[i] = float32(i) - 16 // amax 16 → d = 16/127
		}
		dst := make([]byte, 34)
		QuantizeQ8_0(dst, src)
		if h := uint16(dst[0]) | uint16(dst[1])<<8; h != F32ToF16(16.0/127) {
			t.Fatalf("scale %#04x, want %#04x", h, F32ToF16(16.0/127))
		}
		if int8(dst[2]) != -127 || int8(dst[2+16]) != 0 || int8(dst[2+17]) != 8 {
			// 1·127/16 = 7.9375 → 8
			t.Fatalf("q = %v", dst[2:])
		}
	})
	t.Run("zero block", func(t *testing.T) {
		dst := make([]byte, 34)
		for i := range dst {
			dst[i] = 0xff
		}
		QuantizeQ8_0(dst, make([]float32, 32))
		for i, b := range dst {
			if b != 0 {
				t.Fatalf("byte %d = %#x, want 0", i, b)
			}
		}
	})
	t.Run("round trip", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		src := make([]float32, 32*9)
		for i := range src {
			src[i] = float32(rng.NormFloat64()) * float32(i%5+1)
		}
		q := make([]byte, 9*34)
		QuantizeQ8_0(q, src)
		back := make([]float32, len(src))
		DequantizeQ8_0(back, q)
		for b := 0; b < 9; b++ {
			d := F16ToF32(uint16(q[b*34]) | uint16(q[b*34+1])<<8)
			for j := 0; j < 32; j++ {
				i := b*32 + j
				// Error: half a step, plus the float16 rounding of d (≤ 127·d·2⁻¹¹).
				if e := math.Abs(float64(back[i] - src[i])); e > float64(d)*(0.5+127.0/2048)+1e-7 {
					t.Fatalf("elem %d: %v -> %v (d=%v)", i, src[i], back[i], d)
				}
			}
		}
	})
}

// TestQuantizeKernelsMatchQuantizeQ8_0 checks QuantizeQ8_0 against
// GGML's reference quantizer (round half away from zero of x·(1/d)) and
// every level's activation quantizer against GGML's x86 one
// (quantize_row_q8_0: round half to even of x·(127/max|x|)), bit for bit,
// on blocks with ties, zeros, tiny and huge values.
func TestQuantizeKernelsMatchQuantizeQ8_0(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var blocks [][]float32
	ties := make([]float32, 32) // amax 127 → scale 1: k+0.5 are exact ties
	for i := range ties {
		ties[i] = float32(i-16) + 0.5
	}
	ties[0] = 127
	blocks = append(blocks, ties, make([]float32, 32))
	for _, dir := range []float32{-1, 1} { // one ulp either side of the ties
		near := make([]float32, 32)
		for i := range near {
			near[i] = math.Nextafter32(ties[i], ties[i]+dir)
		}
		near[0] = 127
		blocks = append(blocks, near)
	}
	for _, scale := range []float64{1, 1e-3, 1e-9, 1e-38, 1e4, 1e7} {
		b := make([]float32, 32)
		for i := range b {
			b[i] = float32(rng.NormFloat64() * scale)
		}
		blocks = append(blocks, b)
	}
	one := make([]float32, 32)
	one[7] = -3
	blocks = append(blocks, one)
	var x []float32
	for _, b := range blocks {
		x = append(x, b...)
	}
	nb := len(blocks)
	want := make([]byte, nb*34)
	quantizeQ8Go(want, x)
	got := make([]byte, nb*34)
	QuantizeQ8_0(got, x)
	if string(got) != string(want) {
		t.Errorf("QuantizeQ8_0 differs from the Go reference")
	}
	for b := range nb { // the activation quantizer rounds the ties to even
		xb := x[b*32 : (b+1)*32]
		var amax float32
		for _, v := range xb {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		for j, v := range xb {
			want[b*34+2+j] = byte(int8(math.RoundToEven(float64(v * id))))
		}
	}
	if want[2+16] != 0 || want[2+18] != 2 || want[2+13] != 0xfe { // 0.5 → 0, 2.5 → 2, −2.5 → −2
		t.Fatalf("tie block not rounded to even: % x", want[2:34])
	}
	for _, k := range allImpls() {
		t.Run(k.name, func(t *testing.T) {
			q := make([]int8, nb*32)
			d := make([]float32, nb)
			k.quantize(q, d, x)
			for b := 0; b < nb; b++ {
				wd := F16ToF32(uint16(want[b*34]) | uint16(want[b*34+1])<<8)
				if math.Float32bits(d[b]) != math.Float32bits(wd) {
					t.Errorf("block %d: scale %v, want %v", b, d[b], wd)
				}
				for j := 0; j < 32; j++ {
					if byte(q[b*32+j]) != want[b*34+2+j] {
						t.Errorf("block %d elem %d (x=%v): q %d, want %d", b, j, x[b*32+j], q[b*32+j], int8(want[b*34+2+j]))
					}
				}
			}
		})
	}
}
