package sampling

import (
	"math"
	"testing"
)

// expShiftRef is expShift as one scalar loop with its sums interleaved:
// the definition the vector kernel must match bit for bit.
func expShiftRef(w, l []float32, m, invT, cut float32) float64 {
	var t0, t1 float64
	for i, v := range l {
		e := float32(0)
		if x := (v - m) * invT; x >= cut && x >= -87.33654 {
			e = expf(x)
		}
		w[i] = e
		if i&1 == 0 {
			t0 += float64(e)
		} else {
			t1 += float64(e)
		}
	}
	return t0 + t1
}

// TestExpShiftBits checks expShift (with the vector kernel where the CPU
// has one) against the scalar definition, bit for bit, over lengths that
// exercise the vector body and the scalar tail, several temperatures and
// cuts, and special values.
func TestExpShiftBits(t *testing.T) {
	specials := []float32{ninf(), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), -87.3, -87.34, -88, -1e-30, -200, float32(math.Inf(1))}
	tests := []struct {
		name        string
		n           int
		invT, cut   float32
		withSpecial bool
	}{
		{"short", 7, 1, ninf(), false},
		{"one block", 16, 1.25, ninf(), false},
		{"block and tail", 37, 0.5, ninf(), true},
		{"vocab", 32000, 1 / 0.8, ninf(), false},
		{"vocab hot", 32000, 1 / 0.1, ninf(), true},
		{"min_p cut", 1000, 1, float32(math.Log(0.05)), true},
		{"vocab cold", 32003, 1 / 3.0, -2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := randLogits(uint64(tt.n), tt.n, 40) // much of exp's range
			if tt.withSpecial {
				for i, v := range specials {
					if 3*i < len(l) {
						l[3*i] = v
					}
				}
			}
			for i := range l {
				if math.IsInf(float64(l[i]), 1) {
					l[i] = 1 // +Inf never reaches expShift (m ≥ every logit)
				}
			}
			m := maxOf(l)
			got, want := make([]float32, len(l)), make([]float32, len(l))
			gs, ws := expShift(got, l, m, tt.invT, tt.cut), expShiftRef(want, l, m, tt.invT, tt.cut)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("w[%d] (logit %g) = %g (%#x), want %g (%#x)", i, l[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
			if math.Float64bits(gs) != math.Float64bits(ws) {
				t.Fatalf("sum %v, want %v", gs, ws)
			}
		})
	}
}

// TestMaxOfAndArgmax checks maxOf and Argmax (vector kernels where the CPU
// has them) against one scalar pass, over lengths around the vector width
// with NaN, -Inf and signed zeros in every position class.
func TestMaxOfAndArgmax(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	refArgmax := func(x []float32) int32 {
		best, bi := ninf(), 0
		for i, v := range x {
			if v > best {
				best, bi = v, i
			}
		}
		return int32(bi)
	}
	for _, n := range []int{0, 1, 2, 15, 16, 17, 31, 32, 33, 48, 100, 32000} {
		for _, fill := range []string{"random", "nan", "-inf", "zeros", "max in tail", "max first", "all nan but one"} {
			x := randLogits(uint64(n)+7, n, 5)
			switch fill {
			case "nan":
				for i := 0; i < n; i += 3 {
					x[i] = nan
				}
			case "-inf":
				for i := range x {
					x[i] = ninf()
				}
			case "zeros":
				for i := range x {
					x[i] = ninf()
					if i%5 == 2 {
						x[i] = negZero
					} else if i%5 == 4 {
						x[i] = 0
					}
				}
			case "max in tail":
				if n > 0 {
					x[n-1] = 9
				}
			case "max first":
				if n > 0 {
					x[0] = 9
					x[n/2] = 9
				}
			case "all nan but one":
				for i := range x {
					x[i] = nan
				}
				if n > 0 {
					x[n/2] = -3
				}
			}
			want := ninf()
			for _, v := range x {
				if v > want {
					want = v
				}
			}
			if got := maxOf(x); got != want && !(got != got && want != want) {
				t.Errorf("n=%d %s: maxOf = %g, want %g", n, fill, got, want)
			}
			if got, want := Argmax(x), refArgmax(x); got != want {
				t.Errorf("n=%d %s: Argmax = %d, want %d", n, fill, got, want)
			}
		}
	}
}
