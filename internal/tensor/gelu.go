package tensor

import (
	"math"
	"sync"
)

// GELU (tanh approximation) constants, as in ggml.
const (
	geluCoefA       = 0.044715
	geluSqrt2OverPi = 0.79788456080286535587989211986876
)

// geluF16 is ggml's CPU GELU table: for every half-precision input, the
// half-precision result of gelu_tanh in float32, held as float32 (built on
// first use).
var geluF16 = sync.OnceValue(func() []float32 {
	t := make([]float32, 1<<16)
	for i := range t {
		x := F16ToF32(uint16(i))
		t[i] = F16ToF32(F32ToF16(0.5 * x * (1 + float32(math.Tanh(float64(geluSqrt2OverPi*x*(1+geluCoefA*x*x)))))))
	}
	return t
})

// GELUTanh is gelu(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) as
// llama.cpp's CPU backend evaluates it: x ≤ −10 gives 0, x ≥ 10 gives x,
// and in between x is rounded to half precision and looked up in a table
// of half-precision results (so outputs carry half-precision rounding).
func GELUTanh(x float32) float32 { return geluLookup(geluF16(), x) }

func geluLookup(t []float32, x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return t[f32ToF16Fast(x)]
}

// f32ToF16Fast is F32ToF16 with a branch-light path for values in the
// normal half-precision range (round to nearest even on the bits).
func f32ToF16Fast(x float32) uint16 {
	b := math.Float32bits(x)
	abs := b & 0x7fffffff
	if abs < 0x38800000 || abs >= 0x477ff000 { // half subnormal, or rounding to ±Inf, or Inf/NaN
		return F32ToF16(x)
	}
	r := abs + 0xfff + (abs>>13)&1
	return uint16(b>>16)&0x8000 | uint16(r>>13-(127-15)<<10)
}

// GeGLU computes gate[i] = GELUTanh(gate[i]) · up[i] in place over
// len(gate) elements.
func GeGLU(gate, up []float32) {
	up = up[:len(gate)]
	t := geluF16()
	for i, g := range gate {
		gate[i] = geluLookup(t, g) * up[i]
	}
}

// Softcap computes x[i] = c·tanh(x[i]/c) in place (Gemma's soft-capping of
// attention scores and logits), as ggml evaluates it: scaled by 1/c, tanh
// in float32, scaled by c.
func Softcap(x []float32, c float32) {
	inv := 1 / c
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v*inv))) * c
	}
}
