package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"govllm/internal/gguf"
)

// ropeFactorKind says which per-frequency RoPE factor tensors an
// architecture's GGUF files may hold, as llama.cpp's loaders create them.
type ropeFactorKind uint8

const (
	ropeFactorsNone     ropeFactorKind = iota
	ropeFactorsLlama                   // rope_freqs (Llama 3), or rope_factors_long/_short when the type is longrope
	ropeFactorsLongRoPE                // rope_factors_long/_short (Phi-3)
)

// ggufRope reads the RoPE keys as llama.cpp does (llama_model's hparams,
// llama_context's YaRN attention factor): rope.dimension_count (below the
// head dim only where llama.cpp's builder allows it, spec.partialRope),
// the base, the scaling type ("linear" when absent; none, linear, yarn
// and longrope), its factor (rope.scaling.factor or the older
// rope.scale_linear; any type but none scales the positions by it),
// original_context_length, attn_factor (multiplies cos and sin, whatever
// the type) and YaRN's yarn_beta_fast/slow (32 and 1 when absent). Other
// scaling keys (yarn_log_multiplier, yarn_ext_factor, yarn_attn_factor,
// alpha) are left unread, so the load fails naming them: llama.cpp reads
// them only for architectures govllm does not have.
func ggufRope(k *ggufKeys, spec *archSpec, c *Config) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, k.f.Path, fmt.Sprintf(format, a...))
	}
	rot, err := k.uint("rope.dimension_count", c.HeadDim)
	if err != nil {
		return err
	}
	if rot != c.HeadDim {
		if !spec.partialRope || rot <= 0 || rot > c.HeadDim || rot%2 != 0 {
			return bad("%s.rope.dimension_count = %d differs from the head dim %d (not supported for %s: llama.cpp rotates whole heads there)", k.arch, rot, c.HeadDim, spec.name)
		}
		c.RopeDims = rot
	}
	if c.RopeTheta, err = k.float("rope.freq_base", 10000); err != nil {
		return err
	}
	full := k.arch + ".rope.scaling.type"
	k.used[full] = true
	typ, err := k.f.String(full)
	if errors.Is(err, gguf.ErrKeyNotFound) {
		typ = "linear"
	} else if err != nil {
		return err
	}
	factor, err := k.float("rope.scaling.factor", 0)
	if err == nil && factor == 0 {
		factor, err = k.float("rope.scale_linear", 0)
	}
	if err != nil {
		return err
	}
	k.used[k.arch+".rope.scaling.finetuned"] = true // changes nothing
	if c.RopeOrigCtx, err = k.uint("rope.scaling.original_context_length", 0); err != nil {
		return err
	}
	if c.RopeAttnFactor, err = k.float("rope.scaling.attn_factor", 0); err != nil {
		return err
	}
	switch typ {
	case "none":
		return nil
	case "linear", "longrope":
		if factor != 1 {
			c.RopeLinear = factor
		}
		return nil
	case "yarn":
		c.RopeLinear = max(factor, 1)
		y := RopeYaRN{}
		if y.BetaFast, err = k.float("rope.scaling.yarn_beta_fast", 32); err != nil {
			return err
		}
		if y.BetaSlow, err = k.float("rope.scaling.yarn_beta_slow", 1); err != nil {
			return err
		}
		c.RopeYaRN = &y
		return nil
	}
	return bad("rope scaling type %q is not supported (none, linear, yarn and longrope are)", typ)
}

// ggufRopeFactors names the per-frequency RoPE factor tensors f holds,
// each to be read (and so used), and which one the forward pass divides
// the frequencies by (-1: none). llama and mistral files may hold
// rope_freqs (Llama 3), or with the longrope type rope_factors_long and
// _short; phi3 files the long and short ones whatever the type. Of those
// two, long when the context (MaxSeqLen) exceeds the original one
// (RopeOrigCtx), as llama.cpp's llama_model::get_rope_factors chooses at
// its default context size (the model's). Other tensors of these names
// stay unread, and so fail the load.
func ggufRopeFactors(f *gguf.File, spec *archSpec, c *Config, bad func(string, ...any) error) ([]string, int, error) {
	typ, _ := f.String(spec.name + ".rope.scaling.type")
	switch {
	case spec.ropeFactors == ropeFactorsLlama && typ != "longrope":
		if f.Tensor("rope_freqs.weight") != nil {
			return []string{"rope_freqs.weight"}, 0, nil
		}
		return nil, -1, nil
	case spec.ropeFactors == ropeFactorsNone:
		return nil, -1, nil
	}
	long, short := f.Tensor("rope_factors_long.weight") != nil, f.Tensor("rope_factors_short.weight") != nil
	if long != short {
		return nil, -1, bad("rope_factors_long.weight and rope_factors_short.weight come together (one is missing)")
	}
	if !long {
		return nil, -1, nil
	}
	if c.MaxSeqLen > ropeOrigCtx(c) {
		return []string{"rope_factors_long.weight", "rope_factors_short.weight"}, 0, nil
	}
	return []string{"rope_factors_long.weight", "rope_factors_short.weight"}, 1, nil
}

// ropeOrigCtx is the training context before scaling.
func ropeOrigCtx(c *Config) int {
	if c.RopeOrigCtx > 0 {
		return c.RopeOrigCtx
	}
	return c.MaxSeqLen
}

// hfRopeScaling is config.json's rope_scaling, every field any type uses.
type hfRopeScaling struct {
	RopeType                      string    `json:"rope_type"`
	Type                          string    `json:"type"`
	Factor                        float64   `json:"factor"`
	LowFreqFactor                 float64   `json:"low_freq_factor"`
	HighFreqFactor                float64   `json:"high_freq_factor"`
	OriginalMaxPositionEmbeddings int       `json:"original_max_position_embeddings"`
	BetaFast                      *float64  `json:"beta_fast"`
	BetaSlow                      *float64  `json:"beta_slow"`
	LongFactor                    []float64 `json:"long_factor"`
	ShortFactor                   []float64 `json:"short_factor"`
	AttentionFactor               *float64  `json:"attention_factor"`
}

// hfRopeKeys are the rope_scaling keys each type reads (besides rope_type
// and type); any other key fails the load, naming it.
var hfRopeKeys = map[string][]string{
	"default":  nil,
	"linear":   {"factor"},
	"llama3":   {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
	"yarn":     {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow"},
	"dynamic":  {"factor"},
	"longrope": {"long_factor", "short_factor", "factor", "original_max_position_embeddings", "attention_factor"},
	"su":       {"long_factor", "short_factor", "factor", "original_max_position_embeddings", "attention_factor"},
}

// hfRope reads partial_rotary_factor and rope_scaling into c, returning
// LongRoPE's chosen factors (nil for the other types). YaRN is llama.cpp's
// (the same angles as from a GGUF file); dynamic is vLLM's
// DynamicNTKScalingRotaryEmbedding, which llama.cpp does not implement:
// the base is raised once, for max_position_embeddings·factor positions,
// to base·(factor² − factor + 1)^(d/(d−2)) over the d rotated dims, and
// the positions are not scaled.
func hfRope(h *hfConfig, c *Config, spec *archSpec, bad func(string, ...any) error) ([]float32, error) {
	if f := h.PartialRotaryFactor; f != nil && *f != 1 {
		rot := int(float64(c.HeadDim) * *f)
		if !spec.partialRope || rot <= 0 || rot%2 != 0 || rot > c.HeadDim {
			return nil, bad("partial_rotary_factor %g is not supported for %s", *f, spec.name)
		}
		if rot < c.HeadDim {
			c.RopeDims = rot
		}
	}
	if len(h.RopeScaling) == 0 || string(h.RopeScaling) == "null" {
		return nil, nil
	}
	s, typ, err := decodeHFRopeScaling(h.RopeScaling, bad)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "linear":
		c.RopeLinear = s.Factor
	case "llama3":
		c.RopeScaling = &RopeScaling{Factor: s.Factor, LowFreqFactor: s.LowFreqFactor, HighFreqFactor: s.HighFreqFactor, OriginalMaxPositionEmbeddings: s.OriginalMaxPositionEmbeddings}
	case "yarn":
		c.RopeLinear, c.RopeOrigCtx = max(s.Factor, 1), s.OriginalMaxPositionEmbeddings
		c.RopeYaRN = &RopeYaRN{BetaFast: derefOr(s.BetaFast, 32), BetaSlow: derefOr(s.BetaSlow, 1)}
	case "dynamic":
		if !(s.Factor >= 1) || c.RotaryDims() <= 2 {
			return nil, bad("rope_scaling dynamic factor %g: want ≥ 1", s.Factor)
		}
		d := float64(c.RotaryDims())
		c.RopeTheta *= math.Pow(s.Factor*s.Factor-s.Factor+1, d/(d-2))
	case "longrope", "su":
		return hfLongRoPE(h, s, c, bad)
	}
	return nil, nil
}

// decodeHFRopeScaling decodes rope_scaling, refusing a type or a key it
// does not read.
func decodeHFRopeScaling(raw json.RawMessage, bad func(string, ...any) error) (*hfRopeScaling, string, error) {
	var s hfRopeScaling
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, "", bad("rope_scaling: %v", err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, "", bad("rope_scaling: %v", err)
	}
	typ := s.RopeType
	if typ == "" {
		typ = s.Type
	}
	if typ == "" {
		typ = "default"
	}
	allowed, ok := hfRopeKeys[typ]
	if !ok {
		types := make([]string, 0, len(hfRopeKeys))
		for t := range hfRopeKeys {
			types = append(types, t)
		}
		sort.Strings(types)
		return nil, "", bad("rope_scaling type %q is not supported (%s are)", typ, strings.Join(types, ", "))
	}
	for k := range keys {
		if k != "rope_type" && k != "type" && !slices.Contains(allowed, k) {
			return nil, "", bad("rope_scaling.%s is not supported for rope type %q (it reads %v)", k, typ, allowed)
		}
	}
	return &s, typ, nil
}

// hfLongRoPE reads LongRoPE (Phi-3's "su"): the long and short factors
// (one per rotated pair), the original context (the top-level
// original_max_position_embeddings, else rope_scaling's), and the
// attention factor as transformers computes it when rope_scaling has none:
// √(1 + ln s / ln original) for s = max_position_embeddings / original
// (rope_scaling's factor without the top-level key), 1 when s ≤ 1 — as
// llama.cpp's converter writes it into rope.scaling.attn_factor. The long
// factors are used when MaxSeqLen exceeds the original context, as for a
// GGUF file.
func hfLongRoPE(h *hfConfig, s *hfRopeScaling, c *Config, bad func(string, ...any) error) ([]float32, error) {
	orig, scale := s.OriginalMaxPositionEmbeddings, s.Factor
	if h.OriginalMaxPositionEmbeddings != nil {
		orig = *h.OriginalMaxPositionEmbeddings
		scale = float64(c.MaxSeqLen) / float64(orig)
	}
	if orig <= 0 {
		return nil, bad("longrope without original_max_position_embeddings")
	}
	c.RopeOrigCtx = orig
	c.RopeAttnFactor = 1
	if s.AttentionFactor != nil {
		c.RopeAttnFactor = *s.AttentionFactor
	} else if scale > 1 {
		c.RopeAttnFactor = math.Sqrt(1 + math.Log(scale)/math.Log(float64(orig)))
	}
	n := c.RotaryDims() / 2
	if len(s.LongFactor) != n || len(s.ShortFactor) != n {
		return nil, bad("rope_scaling long_factor (%d) and short_factor (%d): want %d each", len(s.LongFactor), len(s.ShortFactor), n)
	}
	use := s.ShortFactor
	if c.MaxSeqLen > orig {
		use = s.LongFactor
	}
	out := make([]float32, n)
	for i, v := range use {
		out[i] = float32(v)
	}
	return out, nil
}
