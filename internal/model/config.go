package model

import (
	"errors"
	"fmt"
)

// ErrConfig marks an invalid model configuration (errors.Is).
var ErrConfig = errors.New("model: invalid config")

// QDim is the width of the attention queries (NumHeads·HeadDim).
func (c *Config) QDim() int { return c.NumHeads * c.HeadDim }

// KVDim is the width of K and V per token (NumKVHeads·HeadDim).
func (c *Config) KVDim() int { return c.NumKVHeads * c.HeadDim }

// Validate checks that the dimensions are positive and consistent.
func (c *Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	const maxDim = 1 << 20
	for _, f := range []struct {
		name string
		v    int
	}{
		{"dim", c.Dim}, {"hidden_dim", c.HiddenDim}, {"n_layers", c.NumLayers}, {"n_heads", c.NumHeads},
		{"n_kv_heads", c.NumKVHeads}, {"head_dim", c.HeadDim}, {"vocab_size", c.VocabSize}, {"max_seq_len", c.MaxSeqLen},
	} {
		if f.v <= 0 || f.v > maxDim*16 {
			return bad("%s = %d out of range", f.name, f.v)
		}
	}
	if c.NumLayers > 4096 || c.NumHeads > 4096 {
		return bad("%d layers, %d heads: out of range", c.NumLayers, c.NumHeads)
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return bad("n_heads %d is not a multiple of n_kv_heads %d", c.NumHeads, c.NumKVHeads)
	}
	if c.HeadDim%2 != 0 {
		return bad("head_dim %d is odd (RoPE rotates pairs)", c.HeadDim)
	}
	if c.QDim() > maxDim || c.Dim > maxDim || c.HiddenDim > maxDim {
		return bad("dims too large")
	}
	if !(c.RMSNormEps > 0) || c.RMSNormEps > 1 {
		return bad("rms_norm_eps = %g out of range", c.RMSNormEps)
	}
	if !(c.RopeTheta > 0) {
		return bad("rope_theta = %g must be positive", c.RopeTheta)
	}
	if s := c.RopeScaling; s != nil {
		if !(s.Factor >= 1) || !(s.LowFreqFactor > 0) || !(s.HighFreqFactor > s.LowFreqFactor) || s.OriginalMaxPositionEmbeddings <= 0 {
			return bad("rope_scaling %+v: want factor ≥ 1, 0 < low_freq_factor < high_freq_factor, original_max_position_embeddings > 0", *s)
		}
	}
	return c.validateFamily(bad)
}

// validateFamily checks the family fields (see Config).
func (c *Config) validateFamily(bad func(string, ...any) error) error {
	switch {
	case c.Act > ActGELUTanh:
		return bad("activation %d unknown", c.Act)
	case c.NumExperts < 0 || c.NumExperts > 1024 || c.NumExpertsUsed < 0 || c.NumExpertsUsed > c.NumExperts ||
		(c.NumExperts > 0) != (c.NumExpertsUsed > 0):
		return bad("%d experts, %d used: want 0 < used ≤ experts (or both 0)", c.NumExperts, c.NumExpertsUsed)
	case c.SharedExpertDim < 0 || c.SharedExpertDim > 1<<20 || (c.SharedExpertDim > 0 && c.NumExperts == 0):
		return bad("shared expert width %d: want 0, or > 0 with experts", c.SharedExpertDim)
	case c.SlidingWindow < 0 || c.SlidingPattern < 0:
		return bad("sliding window %d, pattern %d: negative", c.SlidingWindow, c.SlidingPattern)
	case !(c.AttnSoftcap >= 0) || !(c.FinalSoftcap >= 0) || !(c.AttnScale >= 0) || !(c.EmbedScale >= 0):
		return bad("soft-caps %g, %g, scales %g, %g: want ≥ 0", c.AttnSoftcap, c.FinalSoftcap, c.AttnScale, c.EmbedScale)
	case !(c.RopeThetaLocal >= 0) || !(c.RopeLinear >= 0):
		return bad("local rope_theta = %g, linear rope factor %g: must not be negative", c.RopeThetaLocal, c.RopeLinear)
	}
	return c.validateRope(bad)
}

// validateRope checks the RoPE variants' fields.
func (c *Config) validateRope(bad func(string, ...any) error) error {
	switch {
	case c.RopeDims < 0 || c.RopeDims > c.HeadDim || c.RopeDims%2 != 0:
		return bad("rope dims %d: want an even number ≤ head_dim %d", c.RopeDims, c.HeadDim)
	case c.RopeOrigCtx < 0 || !(c.RopeAttnFactor >= 0):
		return bad("rope original context %d, attention factor %g: must not be negative", c.RopeOrigCtx, c.RopeAttnFactor)
	case c.RopeScaling != nil && (c.RopeYaRN != nil || c.RopeLinear != 0 || c.RopeDims != 0):
		return bad("llama3 rope scaling with another scaling or partial rotary is not supported")
	case c.RopeYaRN != nil && c.RopeThetaLocal != 0 && c.RopeThetaLocal != c.RopeTheta:
		return bad("yarn rope scaling with a local rope base is not supported")
	}
	if y := c.RopeYaRN; y != nil && (!(y.BetaFast > 0) || !(y.BetaSlow > 0) || !(c.RopeLinear >= 1)) {
		return bad("yarn factor %g, beta_fast %g, beta_slow %g: want factor ≥ 1 and positive betas", c.RopeLinear, y.BetaFast, y.BetaSlow)
	}
	return nil
}

// NumParams is the parameter count (embedding counted once when tied).
func (c *Config) NumParams() int64 {
	d, h, v := int64(c.Dim), int64(c.HiddenDim), int64(c.VocabSize)
	ffn := 3 * d * h
	if c.NumExperts > 0 {
		ffn = int64(c.NumExperts)*(3*d*h+d) + 3*d*int64(c.SharedExpertDim)
	}
	perLayer := 2*d + d*int64(c.QDim()) + 2*d*int64(c.KVDim()) + int64(c.QDim())*d + ffn
	n := v*d + int64(c.NumLayers)*perLayer + d
	if !c.TiedEmbeddings {
		n += v * d
	}
	return n
}
