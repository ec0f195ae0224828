package tensor

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestFMA32: fma32 equals the exact sum rounded once, on random operands
// (whose products and sums often land on float32 midpoints in float64:
// integer-valued b as the Go block kernels pass), specials included.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f := func() float32 {
		switch rng.IntN(6) {
		case 0:
			return float32(rng.IntN(1<<20) - 1<<19) // an integer block sum
		case 1:
			return math.Float32frombits(rng.Uint32()) // any bits: NaN, Inf, subnormals
		default:
			return float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
		}
	}
	for i := range 2_000_000 {
		a, b, c := f(), f(), f()
		got := fma32(a, b, c)
		var want float32
		if finite(a) && finite(b) && finite(c) {
			want = fma32Exact(a, b, c)
		} else {
			want = float32(math.FMA(float64(a), float64(b), float64(c))) // specials: no double rounding
		}
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("case %d: fma32(%v, %v, %v) = %v, want %v", i, a, b, c, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { fma32(1.5, 3, 1<<24) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func finite(x float32) bool { return !math.IsInf(float64(x), 0) && x == x }

// fma32Exact is a·b + c summed exactly, rounded once to float32: the
// reference of TestFMA32.
func fma32Exact(a, b, c float32) float32 {
	var p, s big.Float
	p.SetPrec(1024).SetFloat64(float64(a)).Mul(&p, new(big.Float).SetFloat64(float64(b)))
	s.SetPrec(1024).Add(&p, new(big.Float).SetFloat64(float64(c)))
	v, _ := s.Float32()
	return v
}
