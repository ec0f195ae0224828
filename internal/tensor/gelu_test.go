package tensor

import (
	"math"
	"testing"
)

func TestGELUTanh(t *testing.T) {
	gelu := func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) }
	for _, tc := range []struct {
		x   float32
		tol float64 // half-precision input and output rounding, as ggml's table
	}{
		{-11, 0}, {-10, 0}, {10, 0}, {12.5, 0}, {0, 0},
		{1, 2e-3}, {-1, 1e-3}, {0.3, 1e-3}, {-3, 1e-3}, {5.5, 8e-3}, {1e-3, 1e-6},
	} {
		want := gelu(float64(tc.x))
		switch {
		case tc.x <= -10:
			want = 0
		case tc.x >= 10:
			want = float64(tc.x)
		}
		got := GELUTanh(tc.x)
		if d := math.Abs(float64(got) - want); d > tc.tol {
			t.Errorf("GELUTanh(%g) = %g, want %g (|Δ| %g > %g)", tc.x, got, want, d, tc.tol)
		}
		if h := F16ToF32(F32ToF16(got)); got != h && tc.x > -10 && tc.x < 10 {
			t.Errorf("GELUTanh(%g) = %g is not a half-precision value", tc.x, got)
		}
	}
	gate, up := []float32{1, -20, 20, 0.5}, []float32{2, 3, 0.5, -1}
	want := []float32{2 * GELUTanh(1), 0, 10, -GELUTanh(0.5)}
	GeGLU(gate, up)
	for i := range gate {
		if gate[i] != want[i] {
			t.Errorf("GeGLU[%d] = %g, want %g", i, gate[i], want[i])
		}
	}
}

func TestSoftcap(t *testing.T) {
	for _, tc := range []struct {
		x, c, want float32
		tol        float64
	}{
		{0, 3, 0, 0}, {1e-4, 3, 1e-4, 1e-9}, {100, 3, 3, 1e-6}, {-100, 6, -6, 1e-6},
		{3, 3, float32(3 * math.Tanh(1)), 1e-6}, {-1.5, 0.5, float32(-0.5 * math.Tanh(3)), 1e-6},
	} {
		x := []float32{tc.x}
		Softcap(x, tc.c)
		if d := math.Abs(float64(x[0] - tc.want)); d > tc.tol {
			t.Errorf("Softcap(%g, %g) = %g, want %g", tc.x, tc.c, x[0], tc.want)
		}
	}
}

// TestF32ToF16Fast compares the fast path with F32ToF16 over a sweep of
// float32 bit patterns (every 4099th, both signs, all exponents) and every
// pattern near the ends of its range and around 1.
func TestF32ToF16Fast(t *testing.T) {
	check := func(b uint32) {
		x := math.Float32frombits(b)
		if got, want := f32ToF16Fast(x), F32ToF16(x); got != want && x == x {
			t.Fatalf("f32ToF16Fast(%g = %#x) = %#x, want %#x", x, b, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 4099 {
		check(uint32(b))
	}
	for _, edge := range []uint32{0x38800000, 0x477ff000, 0x3f800000} {
		for b := edge - 1<<14; b < edge+1<<14; b++ {
			check(b)
			check(b | 1<<31)
		}
	}
}
