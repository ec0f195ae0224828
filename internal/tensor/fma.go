package tensor

import (
	"math"
	"math/big"
)

// fma32 is float32 a·b + c rounded once (to nearest even), as VFMADD231PS
// computes it. The float64 FMA is exact but for its one rounding, which can
// only mislead the second (to float32) when it lands on a float32 midpoint:
// those rare cases are summed exactly.
func fma32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	f := float32(r)
	if float64(f) == r || math.IsInf(float64(f), 0) || math.IsNaN(r) {
		return f
	}
	g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), r-float64(f))))
	if (float64(f)+float64(g))/2 != r {
		return f
	}
	var p, s big.Float
	p.SetPrec(1024).SetFloat64(float64(a)).Mul(&p, new(big.Float).SetFloat64(float64(b)))
	s.SetPrec(1024).Add(&p, new(big.Float).SetFloat64(float64(c)))
	v, _ := s.Float32()
	return v
}
