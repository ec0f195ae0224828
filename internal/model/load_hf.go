package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"govllm/internal/safetensors"
	"govllm/internal/tensor"
)

// hfConfig is the part of a Hugging Face config.json this package reads.
type hfConfig struct {
	Architectures         []string `json:"architectures"`
	ModelType             string   `json:"model_type"`
	HiddenSize            int      `json:"hidden_size"`
	IntermediateSize      int      `json:"intermediate_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	NumKeyValueHeads      *int     `json:"num_key_value_heads"`
	HeadDim               *int     `json:"head_dim"`
	VocabSize             int      `json:"vocab_size"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	RMSNormEps            *float64 `json:"rms_norm_eps"`
	RopeTheta             *float64 `json:"rope_theta"`
	TieWordEmbeddings     bool     `json:"tie_word_embeddings"`
	HiddenAct             string   `json:"hidden_act"`
	AttentionBias         bool     `json:"attention_bias"`
	MLPBias               bool     `json:"mlp_bias"`
	SlidingWindow         *int     `json:"sliding_window"`
	UseSlidingWindow      bool     `json:"use_sliding_window"`
	RopeScaling           *struct {
		RopeType                      string  `json:"rope_type"`
		Type                          string  `json:"type"`
		Factor                        float64 `json:"factor"`
		LowFreqFactor                 float64 `json:"low_freq_factor"`
		HighFreqFactor                float64 `json:"high_freq_factor"`
		OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings"`
	} `json:"rope_scaling"`
}

// hfArchs maps HF architectures (config.json "architectures", or
// "model_type" when that is absent) to the GGUF architecture whose
// archSpec describes them.
var hfArchs = map[string]string{
	"LlamaForCausalLM": "llama", "MistralForCausalLM": "llama",
	"Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
	"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
}

// hfArch finds h's architecture in hfArchs.
func hfArch(h *hfConfig) (string, bool) {
	if len(h.Architectures) == 0 {
		a, ok := hfArchs[h.ModelType]
		return a, ok && !strings.HasSuffix(h.ModelType, "CausalLM")
	}
	for _, a := range h.Architectures {
		if g, ok := hfArchs[a]; ok && strings.HasSuffix(a, "CausalLM") {
			return g, true
		}
	}
	return "", false
}

// parseHFConfig turns config.json into a Config.
func parseHFConfig(path string, b []byte) (Config, error) {
	c, _, err := parseHFConfigArch(path, b)
	return c, err
}

// parseHFConfigArch turns config.json into a Config and the family's
// archSpec.
func parseHFConfigArch(path string, b []byte) (Config, archSpec, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, path, fmt.Sprintf(format, a...))
	}
	var h hfConfig
	if err := json.Unmarshal(b, &h); err != nil {
		return Config{}, archSpec{}, bad("%v", err)
	}
	arch, ok := hfArch(&h)
	if !ok {
		return Config{}, archSpec{}, bad("architectures %v (model_type %q) not supported (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM)", h.Architectures, h.ModelType)
	}
	spec := archs[arch]
	c, err := hfCommon(path, &h, arch)
	return c, spec, err
}

// hfCommon reads the hyper-parameters of h for architecture arch.
func hfCommon(path string, h *hfConfig, arch string) (Config, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, path, fmt.Sprintf(format, a...))
	}
	if h.HiddenAct != "" && h.HiddenAct != "silu" {
		return Config{}, bad("hidden_act %q not supported (want silu)", h.HiddenAct)
	}
	if (h.AttentionBias && arch != "qwen2") || h.MLPBias {
		return Config{}, bad("attention_bias / mlp_bias are not supported")
	}
	if h.UseSlidingWindow {
		return Config{}, bad("use_sliding_window is not supported")
	}
	c := Config{
		Dim: h.HiddenSize, HiddenDim: h.IntermediateSize, NumLayers: h.NumHiddenLayers,
		NumHeads: h.NumAttentionHeads, NumKVHeads: h.NumAttentionHeads, VocabSize: h.VocabSize,
		MaxSeqLen: h.MaxPositionEmbeddings, RMSNormEps: 1e-6, RopeTheta: 10000,
		TiedEmbeddings: h.TieWordEmbeddings,
	}
	if h.NumKeyValueHeads != nil {
		c.NumKVHeads = *h.NumKeyValueHeads
	}
	// Mistral's sliding-window attention equals full attention while no
	// sequence is longer than the window: cap the context there. (Qwen's
	// sliding_window applies only with use_sliding_window.)
	if w := h.SlidingWindow; arch == "llama" && w != nil && *w > 0 && *w < c.MaxSeqLen {
		c.MaxSeqLen = *w
	}
	if h.HeadDim != nil {
		c.HeadDim = *h.HeadDim
	} else if c.NumHeads > 0 {
		c.HeadDim = c.Dim / c.NumHeads
	}
	if h.RMSNormEps != nil {
		c.RMSNormEps = float32(*h.RMSNormEps)
	}
	if h.RopeTheta != nil {
		c.RopeTheta = *h.RopeTheta
	}
	if s := h.RopeScaling; s != nil {
		typ := s.RopeType
		if typ == "" {
			typ = s.Type
		}
		switch typ {
		case "default", "":
		case "linear":
			c.RopeLinear = s.Factor
		case "llama3":
			c.RopeScaling = &RopeScaling{Factor: s.Factor, LowFreqFactor: s.LowFreqFactor, HighFreqFactor: s.HighFreqFactor, OriginalMaxPositionEmbeddings: s.OriginalMaxPositionEmbeddings}
		default:
			return Config{}, bad("rope_scaling type %q not supported (linear and llama3 are)", typ)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("model: %s: %w", path, err)
	}
	return c, nil
}

func readHF(dir string) (*rawModel, error) {
	cfgPath := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	c, spec, err := parseHFConfigArch(cfgPath, b)
	if err != nil {
		return nil, err
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	if err := set.ReadData(); err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, dir, fmt.Sprintf(format, a...))
	}
	used := map[string]bool{}
	load := func(name string, shape ...int64) ([]float32, error) {
		used[name] = true
		f, t := set.Tensor(name)
		if t == nil {
			return nil, bad("missing tensor %s", name)
		}
		if !slices.Equal(t.Shape, shape) {
			return nil, bad("tensor %s has shape %v, want %v", name, t.Shape, shape)
		}
		data, err := f.TensorData(t)
		if err != nil {
			return nil, err
		}
		switch t.DType {
		case safetensors.F32:
			return decodeF32(data), nil
		case safetensors.F16:
			return decodeF16(data), nil
		case safetensors.BF16:
			return decodeBF16(data), nil
		}
		return nil, bad("tensor %s has dtype %s (F32, F16, BF16 are supported)", name, t.DType)
	}
	mat := func(name string, rows, cols int) (tensor.Mat, error) {
		v, err := load(name, int64(rows), int64(cols))
		return f32Mat(rows, cols, v), err
	}
	d := c.Dim
	r := &rawModel{cfg: c, layers: make([]rawLayer, c.NumLayers)}
	if r.embed, err = mat("model.embed_tokens.weight", c.VocabSize, d); err != nil {
		return nil, err
	}
	if r.norm, err = load("model.norm.weight", int64(d)); err != nil {
		return nil, err
	}
	used["lm_head.weight"] = true // with tied embeddings, HF ties it to embed_tokens too
	if _, t := set.Tensor("lm_head.weight"); t != nil && !c.TiedEmbeddings {
		o, err := mat("lm_head.weight", c.VocabSize, d)
		if err != nil {
			return nil, err
		}
		r.output = &o
	} else if !c.TiedEmbeddings {
		return nil, bad("tie_word_embeddings is false but lm_head.weight is missing")
	}
	for i := range r.layers {
		if err := readHFLayer(&r.layers[i], fmt.Sprintf("model.layers.%d.", i), &c, &spec, load); err != nil {
			return nil, err
		}
	}
	for _, f := range set.Files {
		for _, n := range f.Names {
			// rotary_emb.inv_freq (old checkpoints) is derived from rope_theta.
			if !used[n] && !strings.HasSuffix(n, ".rotary_emb.inv_freq") {
				return nil, bad("tensor %s is not used (not supported)", n)
			}
		}
	}
	return r, nil
}

// readHFLayer reads one decoder layer's tensors (prefix p) through load,
// with the parts spec asks for, and turns q and k from HF's rotate_half
// layout into adjacent pairs.
func readHFLayer(L *rawLayer, p string, c *Config, spec *archSpec, load func(string, ...int64) ([]float32, error)) error {
	d, qd, kvd, hd := c.Dim, c.QDim(), c.KVDim(), c.HiddenDim
	var err error
	for _, v := range []struct {
		dst  *[]float32
		name string
		n    int
		on   bool
	}{
		{&L.attnNorm, "input_layernorm.weight", d, true}, {&L.ffnNorm, "post_attention_layernorm.weight", d, true},
		{&L.qNorm, "self_attn.q_norm.weight", c.HeadDim, spec.qkNorm}, {&L.kNorm, "self_attn.k_norm.weight", c.HeadDim, spec.qkNorm},
	} {
		if v.on {
			if *v.dst, err = load(p+v.name, int64(v.n)); err != nil {
				return err
			}
		}
	}
	for _, w := range []struct {
		dst        *tensor.Mat
		name       string
		rows, cols int
	}{
		{&L.wq, "self_attn.q_proj", qd, d}, {&L.wk, "self_attn.k_proj", kvd, d}, {&L.wv, "self_attn.v_proj", kvd, d},
		{&L.wo, "self_attn.o_proj", d, qd},
		{&L.wGate, "mlp.gate_proj", hd, d}, {&L.wUp, "mlp.up_proj", hd, d}, {&L.wDown, "mlp.down_proj", d, hd},
	} {
		v, err := load(p+w.name+".weight", int64(w.rows), int64(w.cols))
		if err != nil {
			return err
		}
		*w.dst = f32Mat(w.rows, w.cols, v)
	}
	if spec.name == "qwen2" {
		for _, b := range []struct {
			name string
			n    int
		}{{"q_proj", qd}, {"k_proj", kvd}, {"v_proj", kvd}} {
			v, err := load(p+"self_attn."+b.name+".bias", int64(b.n))
			if err != nil {
				return err
			}
			L.bqkv = append(L.bqkv, v...)
		}
	}
	neoxToPairs(L, c) // HF's rotate_half pairs (i, i+hd/2) are NEOX's
	return nil
}
