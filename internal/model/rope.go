package model

import (
	"math"

	"govllm/internal/tensor"
)

// ropeTable holds cos/sin of pos·freq[i] for positions below len/half.
type ropeTable struct {
	half     int
	freqs    []float64 // half inverse frequencies, scaling applied (HF rope_scaling)
	ggml     *ggmlRope // GGML's float32 angles, when there is no rope_scaling
	cos, sin []float32 // [pos·half + i]
}

// ggmlRope computes the angles as GGML's rope cache does (ggml-cpu
// ggml_rope_cache_init): θ starts at the position as a float32 and is
// multiplied by the float32 base^(−2/headDim) once per pair, each pair's
// angle is θ/factor in float32, and cos and sin are float32 functions of
// it. At position 200 these angles differ from the exact ones by ~1e-5,
// which the quantization of activations in the next matmul can amplify.
type ggmlRope struct {
	scale   float32   // powf(base, −2/headDim)
	factors []float32 // per-pair divisors (rope_freqs), nil for none
}

// angles writes cos and sin of position pos's angles to cs and sn.
func (g *ggmlRope) angles(pos int, cs, sn []float32) {
	theta := float32(pos)
	for i := range cs {
		t := theta
		if i < len(g.factors) {
			t = theta / g.factors[i]
		}
		s, c := math.Sincos(float64(t))
		cs[i], sn[i] = float32(c), float32(s)
		theta *= g.scale
	}
}

// ropeFreqs returns the inverse frequencies θ^(-2i/headDim), with Llama-3
// scaling and per-frequency divisors applied.
func ropeFreqs(c *Config, factors []float32) []float64 {
	half := c.HeadDim / 2
	f := make([]float64, half)
	for i := range f {
		f[i] = 1 / math.Pow(c.RopeTheta, float64(2*i)/float64(c.HeadDim))
		if i < len(factors) && factors[i] > 0 {
			f[i] /= float64(factors[i])
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
		exp := float32(-2.0) / float32(c.HeadDim)
		t.ggml = &ggmlRope{scale: float32(math.Pow(float64(float32(c.RopeTheta)), float64(exp))), factors: factors}
	}
	t.cos = make([]float32, positions*t.half)
	t.sin = make([]float32, positions*t.half)
	for p := 0; p < positions; p++ {
		t.angles(p, t.cos[p*t.half:(p+1)*t.half], t.sin[p*t.half:(p+1)*t.half])
	}
	return t
}

// angles writes cos and sin of position pos's angles to cs and sn.
func (t *ropeTable) angles(pos int, cs, sn []float32) {
	if t.ggml != nil {
		t.ggml.angles(pos, cs, sn)
		return
	}
	for i, f := range t.freqs {
		s, c := math.Sincos(float64(pos) * f)
		cs[i], sn[i] = float32(c), float32(s)
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
