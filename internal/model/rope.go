package model

import (
	"math"

	"govllm/internal/tensor"
)

// ropeTable holds cos/sin of pos·freq[i] for positions below len/half.
type ropeTable struct {
	half     int
	freqs    []float64 // half inverse frequencies, scaling applied
	cos, sin []float32 // [pos·half + i]

	// ggml: the angles are computed as llama.cpp's CPU backend does (see
	// angles); else from freqs in float64 (Llama 3 scaling, from HF).
	ggml       bool
	thetaScale float32   // base^(−2/HeadDim)
	freqScale  float32   // 1/RopeLinear, or 1
	factors    []float32 // per-frequency divisors, or nil
}

// ropeFreqs returns the inverse frequencies θ^(-2i/headDim), with Llama-3
// scaling, linear scaling and per-frequency divisors applied.
func ropeFreqs(c *Config, factors []float32) []float64 {
	half := c.HeadDim / 2
	f := make([]float64, half)
	for i := range f {
		f[i] = 1 / math.Pow(c.RopeTheta, float64(2*i)/float64(c.HeadDim))
		if i < len(factors) && factors[i] > 0 {
			f[i] /= float64(factors[i])
		}
		if c.RopeLinear > 0 {
			f[i] /= c.RopeLinear
		}
	}
	if s := c.RopeScaling; s != nil {
		old := float64(s.OriginalMaxPositionEmbeddings)
		lowWavelen := old / s.LowFreqFactor
		highWavelen := old / s.HighFreqFactor
		for i, freq := range f {
			wavelen := 2 * math.Pi / freq
			switch {
			case wavelen < highWavelen:
			case wavelen > lowWavelen:
				f[i] = freq / s.Factor
			default:
				smooth := (old/wavelen - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
				f[i] = (1-smooth)*freq/s.Factor + smooth*freq
			}
		}
	}
	return f
}

func newRopeTable(c *Config, factors []float32, positions int) ropeTable {
	t := ropeTable{half: c.HeadDim / 2, freqs: ropeFreqs(c, factors)}
	if c.RopeScaling == nil {
		t.ggml, t.factors, t.freqScale = true, factors, 1
		t.thetaScale = float32(math.Pow(float64(float32(c.RopeTheta)), float64(float32(-2)/float32(c.HeadDim))))
		if c.RopeLinear > 0 {
			t.freqScale = 1 / float32(c.RopeLinear)
		}
	}
	t.cos = make([]float32, positions*t.half)
	t.sin = make([]float32, positions*t.half)
	for p := 0; p < positions; p++ {
		t.angles(p, t.cos[p*t.half:(p+1)*t.half], t.sin[p*t.half:(p+1)*t.half])
	}
	return t
}

// angles writes cos and sin of position pos's half angles. In ggml mode
// they are llama.cpp's (ggml_rope_cache_init): θ = pos in float32,
// multiplied by thetaScale in float32 from one frequency to the next,
// divided by the frequency's factor and scaled by freqScale, then cos and
// sin of that float32 angle — whose rounding grows with the position, so
// that computing the angles exactly would move long prompts' results away
// from llama.cpp's. Otherwise pos·freq in float64.
func (t *ropeTable) angles(pos int, cs, sn []float32) {
	if !t.ggml {
		for i, f := range t.freqs {
			s, c := math.Sincos(float64(pos) * f)
			cs[i], sn[i] = float32(c), float32(s)
		}
		return
	}
	theta := float32(pos)
	for i := range cs {
		a := theta
		if t.factors != nil {
			a /= t.factors[i]
		}
		a *= t.freqScale
		s, c := math.Sincos(float64(a))
		cs[i], sn[i] = float32(c), float32(s)
		theta *= t.thetaScale
	}
}

// apply rotates the adjacent pairs of every head of x (heads of headDim =
// 2·half values) by position pos. scratch holds 2·half floats for positions
// past the table.
func (t *ropeTable) apply(x []float32, pos int, scratch []float32) {
	h := t.half
	var cs, sn []float32
	if (pos+1)*h <= len(t.cos) {
		cs, sn = t.cos[pos*h:(pos+1)*h], t.sin[pos*h:(pos+1)*h]
	} else {
		cs, sn = scratch[:h], scratch[h:2*h]
		t.angles(pos, cs, sn)
	}
	tensor.Rope(x, cs, sn)
}
