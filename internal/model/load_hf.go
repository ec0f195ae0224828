package model

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	// Gemma's.
	HiddenActivation      string   `json:"hidden_activation"`
	QueryPreAttnScalar    *float64 `json:"query_pre_attn_scalar"`
	AttnLogitSoftcapping  *float64 `json:"attn_logit_softcapping"`
	FinalLogitSoftcapping *float64 `json:"final_logit_softcapping"`
	SlidingWindowPattern  *int     `json:"sliding_window_pattern"`
	RopeLocalBaseFreq     *float64 `json:"rope_local_base_freq"`
	LayerTypes            []string `json:"layer_types"`
	PartialRotaryFactor   *float64 `json:"partial_rotary_factor"`
	// Mixture of experts (Mixtral, Qwen-MoE).
	NumExperts                   *int  `json:"num_experts"`
	NumLocalExperts              *int  `json:"num_local_experts"`
	NumExpertsPerTok             int   `json:"num_experts_per_tok"`
	MoeIntermediateSize          *int  `json:"moe_intermediate_size"`
	SharedExpertIntermediateSize *int  `json:"shared_expert_intermediate_size"`
	NormTopkProb                 *bool `json:"norm_topk_prob"`
	DecoderSparseStep            *int  `json:"decoder_sparse_step"`
	MlpOnlyLayers                []int `json:"mlp_only_layers"`
	// RoPE scaling (rope_load.go): rope_scaling is checked key by key.
	RopeScaling                   json.RawMessage `json:"rope_scaling"`
	OriginalMaxPositionEmbeddings *int            `json:"original_max_position_embeddings"`
}

// hfArchs maps HF architectures (config.json "architectures", or
// "model_type" when that is absent) to the GGUF architecture whose
// archSpec describes them.
var hfArchs = map[string]string{
	"LlamaForCausalLM": "llama", "MistralForCausalLM": "llama",
	"Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "Phi3ForCausalLM": "phi3",
	"Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3",
	"MixtralForCausalLM": "llama", "Qwen2MoeForCausalLM": "qwen2moe", "Qwen3MoeForCausalLM": "qwen3moe",
	"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "phi3": "phi3",
	"gemma2": "gemma2", "gemma3_text": "gemma3", "mixtral": "llama", "qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe",
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
	c, _, _, err := parseHFConfigArch(path, b)
	return c, err
}

// parseHFConfigArch turns config.json into a Config, the family's
// archSpec and LongRoPE's chosen per-frequency factors (nil when none).
func parseHFConfigArch(path string, b []byte) (Config, archSpec, []float32, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, path, fmt.Sprintf(format, a...))
	}
	var h hfConfig
	if err := json.Unmarshal(b, &h); err != nil {
		return Config{}, archSpec{}, nil, bad("%v", err)
	}
	arch, ok := hfArch(&h)
	if !ok {
		return Config{}, archSpec{}, nil, bad("architectures %v (model_type %q) not supported (supported: Gemma2ForCausalLM, Gemma3ForCausalLM, LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Phi3ForCausalLM, Qwen2ForCausalLM, Qwen2MoeForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM)", h.Architectures, h.ModelType)
	}
	spec := archs[arch]
	var factors []float32
	c, err := hfCommon(path, &h, arch)
	if err == nil {
		err = hfFamily(&h, &c, &spec, bad)
	}
	if err == nil {
		factors, err = hfRope(&h, &c, &spec, bad)
	}
	if err == nil {
		err = hfMoE(&h, &c, &spec, bad)
	}
	if err == nil {
		err = c.Validate()
	}
	return c, spec, factors, err
}

// hfCommon reads the hyper-parameters of h for architecture arch.
func hfCommon(path string, h *hfConfig, arch string) (Config, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, path, fmt.Sprintf(format, a...))
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
	// Mistral's sliding window, on every layer. (Qwen's sliding_window
	// applies only with use_sliding_window, refused above.)
	if w := h.SlidingWindow; arch == "llama" && w != nil && *w > 0 && *w < c.MaxSeqLen {
		c.SlidingWindow = *w
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
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("model: %s: %w", path, err)
	}
	return c, nil
}

// hfFamily checks the activation and reads the family fields of h:
// Gemma's embedding scale, attention scale (query_pre_attn_scalar),
// soft-caps and sliding windows (every other layer for Gemma 2; 5 of 6,
// or sliding_window_pattern, with the local RoPE base for Gemma 3).
func hfFamily(h *hfConfig, c *Config, spec *archSpec, bad func(string, ...any) error) error {
	want := "silu"
	if spec.act == ActGELUTanh {
		want = "gelu_pytorch_tanh"
	}
	if act := cmp.Or(h.HiddenActivation, h.HiddenAct); act != "" && act != want {
		return bad("activation %q not supported for %s (want %s)", act, spec.name, want)
	}
	c.Act = spec.act
	if !spec.embedScale {
		return nil
	}
	c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
	if q := h.QueryPreAttnScalar; q != nil {
		c.AttnScale = float32(1 / math.Sqrt(*q))
	}
	for _, f := range []struct {
		dst *float32
		v   *float64
	}{{&c.AttnSoftcap, h.AttnLogitSoftcapping}, {&c.FinalSoftcap, h.FinalLogitSoftcapping}} {
		if f.v != nil {
			*f.dst = float32(*f.v)
		}
	}
	c.SlidingWindow, c.SlidingPattern = 4096, 2
	if spec.name == "gemma3" {
		c.SlidingPattern, c.RopeThetaLocal = cmp.Or(derefOr(h.SlidingWindowPattern, 0), 6), 10000
		if b := h.RopeLocalBaseFreq; b != nil {
			c.RopeThetaLocal = *b
		}
	}
	if w := h.SlidingWindow; w != nil {
		c.SlidingWindow = *w
	}
	for l, typ := range h.LayerTypes {
		if want := map[bool]string{true: "sliding_attention", false: "full_attention"}[c.IsLocal(l)]; typ != want {
			return bad("layer_types[%d] = %q, the sliding-window pattern %d says %q", l, typ, c.SlidingPattern, want)
		}
	}
	return nil
}

// hfMoE reads the experts of Mixtral (num_local_experts, each
// intermediate_size wide, weights renormalized) and Qwen-MoE
// (num_experts, moe_intermediate_size, norm_topk_prob, and Qwen2-MoE's
// shared expert); every layer must be sparse.
func hfMoE(h *hfConfig, c *Config, spec *archSpec, bad func(string, ...any) error) error {
	experts := derefOr(h.NumExperts, derefOr(h.NumLocalExperts, 0))
	if spec.moe == moeNone || experts == 0 {
		if spec.moe == moeRequired {
			return bad("%s without num_experts", spec.name)
		}
		return nil
	}
	if derefOr(h.DecoderSparseStep, 1) != 1 || len(h.MlpOnlyLayers) > 0 {
		return bad("dense layers among the sparse ones (decoder_sparse_step, mlp_only_layers) are not supported")
	}
	c.NumExperts, c.NumExpertsUsed = experts, h.NumExpertsPerTok
	c.HiddenDim = derefOr(h.MoeIntermediateSize, c.HiddenDim)
	c.NoExpertRenorm = spec.name != "llama" && !derefOr(h.NormTopkProb, false)
	if spec.shared {
		c.SharedExpertDim = derefOr(h.SharedExpertIntermediateSize, 0)
	}
	return nil
}

// derefOr returns *p, or def when p is nil.
func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func readHF(dir string) (*rawModel, error) {
	cfgPath := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	c, spec, factors, err := parseHFConfigArch(cfgPath, b)
	if err != nil {
		return nil, err
	}
	set, err := safetensors.OpenDir(dir) // tensors are read one at a time (TensorData)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, dir, fmt.Sprintf(format, a...))
	}
	g, used := newHFTensors(set, &spec, bad)
	hfSpec := spec
	hfSpec.neox = true // HF keeps q and k for rotate_half: NEOX's pairs (i, i+hd/2)
	r, err := g.readModel(&c, &hfSpec, nil, -1)
	if err != nil {
		return nil, err
	}
	r.ropeFactors = factors
	if _, t := set.Tensor("lm_head.weight"); t != nil && c.TiedEmbeddings {
		used["lm_head.weight"] = true // HF ties it to embed_tokens
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

// hfTensorNames maps the GGUF tensor names the family readers ask for to
// the Hugging Face ones (Gemma's pre/post norms and Phi-3's fused gate|up
// have their own).
func hfTensorNames(spec *archSpec) *strings.Replacer {
	ffnNorm, ffnUp := ".post_attention_layernorm.", ".mlp.up_proj."
	if spec.postNorms {
		ffnNorm = ".pre_feedforward_layernorm."
	}
	if spec.fusedGateUp {
		ffnUp = ".mlp.gate_up_proj."
	}
	// Experts: {e} stands for the expert's index.
	moe := []string{".ffn_gate_inp.", ".mlp.gate.", ".ffn_gate_exps.", ".mlp.experts.{e}.gate_proj.",
		".ffn_up_exps.", ".mlp.experts.{e}.up_proj.", ".ffn_down_exps.", ".mlp.experts.{e}.down_proj.",
		".ffn_gate_inp_shexp.", ".mlp.shared_expert_gate.", ".ffn_gate_shexp.", ".mlp.shared_expert.gate_proj.",
		".ffn_up_shexp.", ".mlp.shared_expert.up_proj.", ".ffn_down_shexp.", ".mlp.shared_expert.down_proj."}
	if spec.name == "llama" {
		moe = []string{".ffn_gate_inp.", ".block_sparse_moe.gate.", ".ffn_gate_exps.", ".block_sparse_moe.experts.{e}.w1.",
			".ffn_up_exps.", ".block_sparse_moe.experts.{e}.w3.", ".ffn_down_exps.", ".block_sparse_moe.experts.{e}.w2."}
	}
	return strings.NewReplacer(append(moe,
		"token_embd.", "model.embed_tokens.", "output_norm.", "model.norm.", "output.", "lm_head.", "blk.", "model.layers.",
		".attn_qkv.", ".self_attn.qkv_proj.", ".attn_q_norm.", ".self_attn.q_norm.", ".attn_k_norm.", ".self_attn.k_norm.",
		".attn_q.", ".self_attn.q_proj.", ".attn_k.", ".self_attn.k_proj.", ".attn_v.", ".self_attn.v_proj.",
		".attn_output.", ".self_attn.o_proj.", ".attn_norm.", ".input_layernorm.",
		".post_attention_norm.", ".post_attention_layernorm.", ".post_ffw_norm.", ".post_feedforward_layernorm.",
		".ffn_norm.", ffnNorm, ".ffn_gate.", ".mlp.gate_proj.", ".ffn_up.", ffnUp, ".ffn_down.", ".mlp.down_proj.",
	)...)
}

// newHFTensors returns readers of set's tensors under the GGUF names the
// family readers use (F32, F16 or BF16, as F32; Gemma's norm weights w as
// the 1 + w they stand for), and the set of HF names they were asked for.
func newHFTensors(set *safetensors.Set, spec *archSpec, bad func(string, ...any) error) (*ggufTensors, map[string]bool) {
	names := hfTensorNames(spec)
	used := map[string]bool{}
	// load reads an HF tensor of the given shape (a vector may also come
	// as a one-row matrix).
	load := func(name string, shape ...int64) ([]float32, error) {
		used[name] = true
		f, t := set.Tensor(name)
		if t == nil {
			return nil, bad("missing tensor %s", name)
		}
		if !slices.Equal(t.Shape, shape) && !(len(shape) == 1 && slices.Equal(t.Shape, []int64{1, shape[0]})) {
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
	// mat reads a matrix, or n experts' (HF keeps one tensor per expert)
	// stacked.
	mat := func(name string, rows, cols, n int) (tensor.Mat, error) {
		hf := names.Replace(name)
		if n == 0 {
			v, err := load(hf, int64(rows), int64(cols))
			return f32Mat(rows, cols, v), err
		}
		all := make([]float32, 0, n*rows*cols)
		for e := range n {
			v, err := load(strings.ReplaceAll(hf, "{e}", strconv.Itoa(e)), int64(rows), int64(cols))
			if err != nil {
				return tensor.Mat{}, err
			}
			all = append(all, v...)
		}
		return f32Mat(n*rows, cols, all), nil
	}
	vec := func(name string, n int) ([]float32, error) {
		v, err := load(names.Replace(name), int64(n))
		if err == nil && spec.normPlusOne && strings.HasSuffix(name, "norm.weight") {
			for i := range v {
				v[i]++ // Gemma's RMSNorm multiplies by 1 + w
			}
		}
		return v, err
	}
	has := func(name string) bool { _, t := set.Tensor(names.Replace(name)); return t != nil }
	return &ggufTensors{mat: mat, vec: vec, has: has, bad: bad}, used
}
