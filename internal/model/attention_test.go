package model

import (
	"math"
	"testing"
)

func TestExpf(t *testing.T) {
	for x := float32(-90); x <= 0; x += 0.0137 {
		got, want := float64(expf(x)), math.Exp(float64(x))
		if want < 1e-37 {
			continue // float32 subnormals: expf flushes to 0 below -87.3
		}
		if math.Abs(got-want) > 3e-7*want {
			t.Fatalf("expf(%g) = %g, want %g", x, got, want)
		}
	}
	tests := []struct{ x, want float32 }{{0, 1}, {-100, 0}, {float32(math.Inf(-1)), 0}}
	for _, tc := range tests {
		if got := expf(tc.x); got != tc.want {
			t.Errorf("expf(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
}

func TestSoftmax(t *testing.T) {
	tests := [][]float32{{0}, {1, 2, 3}, {-1e30, 0, 5}, {7, 7, 7, 7}}
	for _, x := range tests {
		want := make([]float64, len(x))
		m := math.Inf(-1)
		for _, v := range x {
			m = math.Max(m, float64(v))
		}
		s := 0.0
		for i, v := range x {
			want[i] = math.Exp(float64(v) - m)
			s += want[i]
		}
		got := append([]float32(nil), x...)
		softmax(got)
		for i := range got {
			if math.Abs(float64(got[i])-want[i]/s) > 1e-6 {
				t.Fatalf("softmax(%v) = %v", x, got)
			}
		}
	}
}
