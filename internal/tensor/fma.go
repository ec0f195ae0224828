package tensor

import (
	"math"
)

// fma32 is float32 a·b + c rounded once (to nearest even), as VFMADD231PS
// computes it. The product of two float32s is exact in float64, and
// TwoSum gives the rounding error e of the float64 sum s, so s + e is the
// exact result; rounding s to float32 can only go wrong when s lands on a
// float32 midpoint, and then e's sign says which neighbour is nearer. No
// allocation (this runs per block in the Go kernels). The product is exact
// for all float32 inputs: at most 48 significant bits, and its magnitude,
// when not 0, is at least 2^-298, far from float64's subnormals.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	f := float32(s)
	if float64(f) == s || math.IsInf(s, 0) || math.IsNaN(s) || math.IsInf(float64(f), 0) {
		return f
	}
	bp := s - p
	e := (p - (s - bp)) + (float64(c) - bp) // s + e == p + c exactly
	if e == 0 {
		return f
	}
	g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), s-float64(f))))
	if (float64(f)+float64(g))/2 != s {
		return f // s is not a midpoint: float32(s) is the nearest
	}
	if (e > 0) == (g > f) {
		return g
	}
	return f
}
