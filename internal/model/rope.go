package model

import (
	"math"

	"govllm/internal/tensor"
)

// ropeTable holds cos/sin of pos·freq[i] for positions below len/half.
type ropeTable struct {
	half    int       // rotated pairs per head (RotaryDims/2)
	headDim int       // values per head; those past 2·half are not rotated
	freqs   []float64 // half inverse frequencies, scaling applied
	cos     []float32 // [pos·half + i]
	sin     []float32

	// ggml: the angles are computed as llama.cpp's CPU backend does (see
	// angles); else from freqs in float64 (Llama 3 scaling, from HF).
	ggml       bool
	thetaScale float32   // base^(−2/RotaryDims)
	freqScale  float32   // 1/RopeLinear, or 1
	factors    []float32 // per-frequency divisors, or nil
	// YaRN (ggml's rope_yarn): ext = 1 mixes the interpolated and the
	// original angle of frequency i by a ramp falling from 1 at corrLo to
	// 0 at corrHi; 0 = no mixing.
	ext            float32
	corrLo, corrHi float32
	mscale         float32 // multiplies cos and sin
}

// ropeFreqs returns the inverse frequencies θ^(-2i/dims), with Llama-3
// scaling, linear scaling and per-frequency divisors applied.
func ropeFreqs(c *Config, factors []float32) []float64 {
	dims := c.RotaryDims()
	f := make([]float64, dims/2)
	for i := range f {
		f[i] = 1 / math.Pow(c.RopeTheta, float64(2*i)/float64(dims))
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

// logf is C's logf as far as it matters here (float32 in and out).
func logf(x float32) float32 { return float32(math.Log(float64(x))) }

func newRopeTable(c *Config, factors []float32, positions int) ropeTable {
	dims := c.RotaryDims()
	t := ropeTable{half: dims / 2, headDim: c.HeadDim, freqs: ropeFreqs(c, factors), mscale: 1}
	if c.RopeScaling == nil {
		t.ggml, t.factors, t.freqScale = true, factors, 1
		t.thetaScale = float32(math.Pow(float64(float32(c.RopeTheta)), float64(float32(-2)/float32(dims))))
		if c.RopeLinear > 0 {
			t.freqScale = 1 / float32(c.RopeLinear)
		}
		t.initScale(c)
	}
	t.cos = make([]float32, positions*t.half)
	t.sin = make([]float32, positions*t.half)
	for p := 0; p < positions; p++ {
		t.angles(p, t.cos[p*t.half:(p+1)*t.half], t.sin[p*t.half:(p+1)*t.half])
	}
	return t
}

// initScale sets the magnitude scale and YaRN's correction range in
// llama.cpp's float32 steps: llama_context's yarn_attn_factor (the YaRN
// magnitude 0.1·ln(factor) + 1, divided by the 1 + 0.1·ln(factor) that
// ggml's rope_yarn multiplies back, times rope.scaling.attn_factor), then
// rope_yarn's own correction; and ggml_rope_yarn_corr_dims.
func (t *ropeTable) initScale(c *Config) {
	attn := float32(1)
	if c.RopeAttnFactor > 0 {
		attn = float32(c.RopeAttnFactor)
	}
	y := c.RopeYaRN
	if y == nil {
		t.mscale = attn
		return
	}
	factor := 1 / t.freqScale
	yaf := float32(1)
	if factor > 1 {
		yaf = 0.1*logf(factor) + 1
	}
	yaf *= 1 / (1 + 0.1*logf(factor))
	yaf *= attn
	t.ext = 1
	t.mscale = yaf * (1 + 0.1*logf(1/t.freqScale))
	orig := c.RopeOrigCtx
	if orig == 0 {
		orig = c.MaxSeqLen
	}
	dims, base := float32(2*t.half), float32(c.RopeTheta)
	corr := func(beta float64) float32 {
		return dims * logf(float32(orig)/(float32(beta)*2*float32(math.Pi))) / (2 * logf(base))
	}
	t.corrLo = max(0, float32(math.Floor(float64(corr(y.BetaFast)))))
	t.corrHi = min(dims-1, float32(math.Ceil(float64(corr(y.BetaSlow)))))
}

// angles writes cos and sin of position pos's half angles. In ggml mode
// they are llama.cpp's (ggml_rope_cache_init, rope_yarn): θ = pos in
// float32, multiplied by thetaScale in float32 from one frequency to the
// next, divided by the frequency's factor and scaled by freqScale (with
// YaRN, mixed with the unscaled θ by the ramp), then cos and sin of that
// float32 angle times mscale — whose rounding grows with the position, so
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
		extrap := theta
		if t.factors != nil {
			extrap /= t.factors[i]
		}
		a := extrap * t.freqScale
		if t.ext != 0 {
			y := (float32(i) - t.corrLo) / max(0.001, t.corrHi-t.corrLo)
			ramp := (1 - min(1, max(0, y))) * t.ext
			a = a*(1-ramp) + extrap*ramp
		}
		s, c := math.Sincos(float64(a))
		cs[i], sn[i] = float32(c)*t.mscale, float32(s)*t.mscale
		theta *= t.thetaScale
	}
}

// apply rotates the adjacent pairs of every head of x (heads of headDim
// values, of which the first 2·half rotate) by position pos. scratch holds
// 2·half floats for positions past the table.
func (t *ropeTable) apply(x []float32, pos int, scratch []float32) {
	h := t.half
	var cs, sn []float32
	if (pos+1)*h <= len(t.cos) {
		cs, sn = t.cos[pos*h:(pos+1)*h], t.sin[pos*h:(pos+1)*h]
	} else {
		cs, sn = scratch[:h], scratch[h:2*h]
		t.angles(pos, cs, sn)
	}
	if 2*h == t.headDim {
		tensor.Rope(x, cs, sn)
		return
	}
	for o := 0; o+t.headDim <= len(x); o += t.headDim {
		tensor.Rope(x[o:o+2*h], cs, sn)
	}
}
