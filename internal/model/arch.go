package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"govllm/internal/gguf"
	"govllm/internal/tensor"
)

// archSpec is what one architecture family changes in the shared forward
// pass, as data: the loaders read it, fill Config's family fields and the
// optional parts of Layer, and the one Forward consumes them. A new family
// is a row of archs (plus, where its math truly differs, that math in the
// forward pass, switched on by a Config field). What the files say for
// themselves is read from them, for every family, as llama.cpp does: q|k|v
// fused or apart and their optional biases (readAttention), tied output,
// RoPE scaling, expert counts; the hparams functions read the family's
// own keys (windows, soft-caps, local RoPE base).
type archSpec struct {
	name        string     // the GGUF general.architecture
	neox        bool       // RoPE rotates pairs (i, i+HeadDim/2): q and k rows are permuted at load to adjacent pairs
	qkNorm      bool       // attn_{q,k}_norm: per-head RMSNorm of q and k before RoPE
	postNorms   bool       // post_attention_norm, post_ffw_norm: RMSNorm of each sub-layer's output
	fusedGateUp bool       // ffn_up = gate|up rows (no ffn_gate)
	embedScale  bool       // token embeddings × √Dim on input
	normPlusOne bool       // HF stores the RMSNorm weights as w for 1 + w (GGUF stores 1 + w): Gemma
	act         Activation // the gated FFN's activation
	moe         moeKind
	shared      bool // a shared expert (ffn_*_shexp, gated by ffn_gate_inp_shexp), router weights not renormalized: Qwen2-MoE
	tiedAlways  bool // the output head is token_embd (an output.weight is not read)
	partialRope bool // rope.dimension_count may be below the head dim (llama.cpp asserts it is not elsewhere)
	ropeFactors ropeFactorKind
	// hparams reads the family's own metadata keys into c.
	hparams func(k *ggufKeys, c *Config) error
}

type moeKind uint8

const (
	moeNone     moeKind = iota
	moeOptional         // MoE when expert_count is set (llama: Mixtral)
	moeRequired
)

// archs are the GGUF architectures (general.architecture) Load supports.
var archs = map[string]archSpec{
	"llama":    {moe: moeOptional, ropeFactors: ropeFactorsLlama, hparams: mistralWindow},
	"mistral":  {moe: moeOptional, ropeFactors: ropeFactorsLlama, hparams: mistralWindow},
	"qwen2":    {neox: true},
	"qwen3":    {neox: true, qkNorm: true},
	"qwen2moe": {neox: true, moe: moeRequired, shared: true},
	"qwen3moe": {neox: true, qkNorm: true, moe: moeRequired},
	"phi3":     {neox: true, fusedGateUp: true, partialRope: true, ropeFactors: ropeFactorsLongRoPE, hparams: phi3Window},
	"gemma2": {neox: true, postNorms: true, embedScale: true, normPlusOne: true, act: ActGELUTanh, tiedAlways: true,
		partialRope: true, hparams: gemma2Params},
	"gemma3": {neox: true, qkNorm: true, postNorms: true, embedScale: true, normPlusOne: true, act: ActGELUTanh,
		partialRope: true, hparams: gemma3Params},
}

func init() {
	for name, s := range archs {
		s.name = name
		archs[name] = s
	}
}

// supportedArchs lists archs' names, sorted, for errors.
func supportedArchs() string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ggufKeys reads an architecture's metadata keys (arch + "." + key) and
// remembers which it read, so that a key nobody read fails the load
// (unused reports them).
type ggufKeys struct {
	f    *gguf.File
	arch string
	used map[string]bool
}

func (k *ggufKeys) has(key string) bool { return k.f.Has(k.arch + "." + key) }

// uint reads an unsigned key; def ≥ 0 is its default when absent.
func (k *ggufKeys) uint(key string, def int) (int, error) {
	full := k.arch + "." + key
	k.used[full] = true
	v, err := k.f.Uint(full)
	if errors.Is(err, gguf.ErrKeyNotFound) && def >= 0 {
		return def, nil
	}
	if err != nil {
		return 0, err
	}
	if v > 1<<31 {
		return 0, fmt.Errorf("%w: %s: %s = %d too large", ErrFormat, k.f.Path, full, v)
	}
	return int(v), nil
}

// float reads a float key, def when absent.
func (k *ggufKeys) float(key string, def float64) (float64, error) {
	full := k.arch + "." + key
	k.used[full] = true
	v, err := k.f.Float(full)
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return def, nil
	}
	return v, err
}

// unused returns the architecture's keys that were not read, sorted.
func (k *ggufKeys) unused() []string {
	var out []string
	for _, key := range k.f.Keys {
		if strings.HasPrefix(key, k.arch+".") && !k.used[key] {
			out = append(out, key)
		}
	}
	return out
}

// ggufHeader finds f's architecture and reads its configuration; every
// metadata key of the architecture must be read.
func ggufHeader(f *gguf.File, bad func(string, ...any) error) (Config, archSpec, error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return Config{}, archSpec{}, err
	}
	spec, ok := archs[arch]
	if !ok {
		return Config{}, spec, bad("architecture %q is not supported (supported: %s)", arch, supportedArchs())
	}
	keys := &ggufKeys{f: f, arch: arch, used: map[string]bool{}}
	c, err := ggufConfig(keys, &spec)
	if err != nil {
		return c, spec, err
	}
	emb := f.Tensor("token_embd.weight")
	if emb == nil || len(emb.Dims) != 2 {
		return c, spec, bad("missing or malformed token_embd.weight")
	}
	c.VocabSize = int(emb.Dims[1])
	if err := ggufChecked(keys, &c); err != nil {
		return c, spec, err
	}
	if u := keys.unused(); len(u) > 0 {
		return c, spec, bad("metadata %s not supported (each may change the math)", strings.Join(u, ", "))
	}
	c.TiedEmbeddings = spec.tiedAlways || f.Tensor("output.weight") == nil
	if err := c.Validate(); err != nil {
		return c, spec, fmt.Errorf("model: %s: %w", f.Path, err)
	}
	return c, spec, nil
}

// ggufChecked reads the keys that must agree with what the loader
// assumes: vocab_size (the embedding rows), attention.causal (true); and
// tensor_data_layout, which names the converter's q/k layout (old llama
// files) and changes nothing.
func ggufChecked(k *ggufKeys, c *Config) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, k.f.Path, fmt.Sprintf(format, a...))
	}
	if v, err := k.uint("vocab_size", c.VocabSize); err != nil {
		return err
	} else if v != c.VocabSize {
		return bad("%s.vocab_size = %d, token_embd has %d rows", k.arch, v, c.VocabSize)
	}
	k.used[k.arch+".tensor_data_layout"] = true
	full := k.arch + ".attention.causal"
	k.used[full] = true
	if causal, err := k.f.Bool(full); err == nil && !causal {
		return bad("non-causal attention (%s = false) is not supported", full)
	} else if err != nil && !errors.Is(err, gguf.ErrKeyNotFound) {
		return err
	}
	return nil
}

// ggufConfig reads the hyper-parameters every family shares, then the
// family's own (spec.hparams).
func ggufConfig(k *ggufKeys, spec *archSpec) (Config, error) {
	var c Config
	var err error
	for _, p := range []struct {
		dst *int
		key string
		def int
	}{
		{&c.Dim, "embedding_length", -1}, {&c.HiddenDim, "feed_forward_length", -1},
		{&c.NumLayers, "block_count", -1}, {&c.NumHeads, "attention.head_count", -1},
		{&c.MaxSeqLen, "context_length", 2048},
	} {
		if *p.dst, err = k.uint(p.key, p.def); err != nil {
			return c, err
		}
	}
	if c.NumKVHeads, err = k.uint("attention.head_count_kv", c.NumHeads); err != nil {
		return c, err
	}
	if c.NumHeads > 0 {
		if c.HeadDim, err = k.uint("attention.key_length", c.Dim/c.NumHeads); err != nil {
			return c, err
		}
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrFormat, k.f.Path, fmt.Sprintf(format, a...))
	}
	if v, err := k.uint("attention.value_length", c.HeadDim); err != nil {
		return c, err
	} else if v != c.HeadDim {
		return c, bad("%s.attention.value_length = %d differs from the head dim %d (not supported)", k.arch, v, c.HeadDim)
	}
	eps, err := k.float("attention.layer_norm_rms_epsilon", 1e-5)
	if err != nil {
		return c, err
	}
	c.RMSNormEps = float32(eps)
	if err := ggufRope(k, spec, &c); err != nil {
		return c, err
	}
	if err := ggufMoE(k, spec, &c); err != nil {
		return c, err
	}
	if spec.embedScale {
		c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
	}
	c.Act = spec.act
	if spec.hparams != nil {
		if err := spec.hparams(k, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ggufMoE reads the expert counts: each expert's FFN width is
// expert_feed_forward_length (Qwen-MoE), else feed_forward_length
// (Mixtral); and a shared expert's.
func ggufMoE(k *ggufKeys, spec *archSpec, c *Config) error {
	if spec.moe == moeNone {
		return nil
	}
	var err error
	if c.NumExperts, err = k.uint("expert_count", 0); err != nil {
		return err
	}
	if c.NumExpertsUsed, err = k.uint("expert_used_count", 0); err != nil {
		return err
	}
	if spec.moe == moeRequired && c.NumExperts == 0 {
		return fmt.Errorf("%w: %s: %s.expert_count is missing", ErrFormat, k.f.Path, k.arch)
	}
	if c.NumExperts == 0 {
		return nil
	}
	nff, def := c.HiddenDim, c.HiddenDim
	if spec.shared {
		// llama.cpp's Qwen2-MoE defaults: experts n_ff/n_expert_used wide,
		// the shared expert n_ff.
		def = nff / max(c.NumExpertsUsed, 1)
		c.NoExpertRenorm = true
		if c.SharedExpertDim, err = k.uint("expert_shared_feed_forward_length", nff); err != nil {
			return err
		}
	}
	c.HiddenDim, err = k.uint("expert_feed_forward_length", def)
	return err
}

// mistralWindow honours a llama/mistral file's sliding window on every
// layer (Mistral 7B v0.1); llama.cpp ignores the key.
func mistralWindow(k *ggufKeys, c *Config) (err error) {
	c.SlidingWindow, err = k.uint("attention.sliding_window", 0)
	return err
}

// phi3Window reads Phi-3's sliding window and, as llama.cpp does, does not
// apply it (its converters write it inconsistently; llama.cpp#13676).
func phi3Window(k *ggufKeys, _ *Config) error {
	_, err := k.uint("attention.sliding_window", 0)
	return err
}

// gemmaWindow reads the sliding window, its layer pattern (default
// pattern) and the local layers' RoPE base (default base).
func gemmaWindow(k *ggufKeys, c *Config, window, pattern int, base float64) (err error) {
	if c.SlidingWindow, err = k.uint("attention.sliding_window", window); err != nil {
		return err
	}
	if c.SlidingPattern, err = k.uint("attention.sliding_window_pattern", pattern); err != nil {
		return err
	}
	c.RopeThetaLocal, err = k.float("rope.freq_base_swa", base)
	return err
}

// gemmaScale is Gemma's attention scale: 1/√(Dim/NumHeads) for the 27B
// models (query_pre_attn_scalar), else 1/√HeadDim, as llama.cpp decides
// by the layer count.
func gemmaScale(c *Config, layers27B int) {
	if c.NumLayers == layers27B {
		c.AttnScale = float32(1 / math.Sqrt(float64(c.Dim/c.NumHeads)))
	}
}

// gemma2Params: window 4096 on every other layer unless the file says
// otherwise, both soft-caps, one RoPE base.
func gemma2Params(k *ggufKeys, c *Config) error {
	if err := gemmaWindow(k, c, 4096, 2, c.RopeTheta); err != nil {
		return err
	}
	for _, p := range []struct {
		dst *float32
		key string
	}{{&c.AttnSoftcap, "attn_logit_softcapping"}, {&c.FinalSoftcap, "final_logit_softcapping"}} {
		v, err := k.float(p.key, 0)
		if err != nil {
			return err
		}
		*p.dst = float32(v)
	}
	if c.RopeThetaLocal != c.RopeTheta && c.RopeLinear != 0 {
		return fmt.Errorf("%w: %s: gemma2 with rope.freq_base_swa and linear RoPE scaling is not supported", ErrFormat, k.f.Path)
	}
	gemmaScale(c, 46)
	return nil
}

// gemma3Params: sliding window (if any) on 5 of every 6 layers with the
// local RoPE base 1e4 unless the file says otherwise; a final soft-cap
// when the file has one.
func gemma3Params(k *ggufKeys, c *Config) error {
	if k.has("attention.sliding_window") {
		if err := gemmaWindow(k, c, 0, 6, 10000); err != nil {
			return err
		}
	}
	v, err := k.float("final_logit_softcapping", 0)
	if err != nil {
		return err
	}
	c.FinalSoftcap = float32(v)
	gemmaScale(c, 62)
	return nil
}

// ggufTensors reads the weights of a family's GGUF file into r, through
// mat (a matrix of rows × cols, or of n stacked experts as n·rows rows)
// and vec.
type ggufTensors struct {
	mat func(name string, rows, cols, n int) (tensor.Mat, error)
	vec func(name string, n int) ([]float32, error)
	has func(name string) bool              // whether the file has the tensor
	bad func(format string, a ...any) error // an ErrFormat naming the file
}

// readModel reads the embeddings, output head, final norm, the RoPE
// factor tensors ropeNames (keeping ropeNames[pick]; ggufRopeFactors) and
// every layer.
func (g *ggufTensors) readModel(c *Config, spec *archSpec, ropeNames []string, pick int) (*rawModel, error) {
	r := &rawModel{cfg: *c, layers: make([]rawLayer, c.NumLayers)}
	var err error
	if r.embed, err = g.mat("token_embd.weight", c.VocabSize, c.Dim, 0); err != nil {
		return nil, err
	}
	if ec := tensor.CodecOf(r.embed.Type); ec != nil && c.Dim%ec.BlockSize != 0 {
		return nil, g.bad("%s token embeddings need dim %% %d == 0", ec.Name, ec.BlockSize)
	}
	if !c.TiedEmbeddings {
		o, err := g.mat("output.weight", c.VocabSize, c.Dim, 0)
		if err != nil {
			return nil, err
		}
		r.output = &o
	}
	if r.norm, err = g.vec("output_norm.weight", c.Dim); err != nil {
		return nil, err
	}
	for i, name := range ropeNames {
		v, err := g.vec(name, c.RotaryDims()/2)
		if err != nil {
			return nil, err
		}
		if i == pick {
			r.ropeFactors = v
		}
	}
	for i := range r.layers {
		if err := g.readLayer(&r.layers[i], i, c, spec); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readLayer reads layer i's tensors as spec describes them.
func (g *ggufTensors) readLayer(L *rawLayer, i int, c *Config, spec *archSpec) error {
	p := fmt.Sprintf("blk.%d.", i)
	qd := c.QDim()
	var err error
	if err = g.readAttention(L, p, c); err != nil {
		return err
	}
	if L.wo, err = g.mat(p+"attn_output.weight", c.Dim, qd, 0); err != nil {
		return err
	}
	norms := []struct {
		dst  *[]float32
		name string
		n    int
		on   bool
	}{
		{&L.attnNorm, "attn_norm", c.Dim, true}, {&L.ffnNorm, "ffn_norm", c.Dim, true},
		{&L.qNorm, "attn_q_norm", c.HeadDim, spec.qkNorm}, {&L.kNorm, "attn_k_norm", c.HeadDim, spec.qkNorm},
		{&L.postAttnNorm, "post_attention_norm", c.Dim, spec.postNorms},
		{&L.postFFNNorm, "post_ffw_norm", c.Dim, spec.postNorms},
	}
	for _, nm := range norms {
		if nm.on {
			if *nm.dst, err = g.vec(p+nm.name+".weight", nm.n); err != nil {
				return err
			}
		}
	}
	if spec.neox {
		neoxToPairs(L, c)
	}
	if c.NumExperts > 0 {
		return g.readExperts(L, p, c)
	}
	return g.readFFN(L, p, c, spec)
}

// readAttention reads Wq, Wk, Wv and their biases as llama.cpp's
// create_tensor_qkv does for every architecture: a fused attn_qkv (q|k|v
// rows, split here; Phi-3's files) with an optional attn_qkv.bias, else
// attn_q, attn_k, attn_v, each with an optional bias (Qwen2's files); an
// absent bias among present ones is zero.
func (g *ggufTensors) readAttention(L *rawLayer, p string, c *Config) error {
	qd, kvd := c.QDim(), c.KVDim()
	var err error
	if g.has(p + "attn_qkv.weight") {
		qkv, err := g.mat(p+"attn_qkv.weight", qd+2*kvd, c.Dim, 0)
		if err != nil {
			return err
		}
		L.wq, L.wk, L.wv = rowSlice(qkv, 0, qd), rowSlice(qkv, qd, qd+kvd), rowSlice(qkv, qd+kvd, qd+2*kvd)
		L.fusedQKV = true
		if g.has(p + "attn_qkv.bias") {
			L.bqkv, err = g.vec(p+"attn_qkv.bias", qd+2*kvd)
		}
		return err
	}
	parts := []struct {
		dst       *tensor.Mat
		name      string
		rows, off int
	}{{&L.wq, "attn_q", qd, 0}, {&L.wk, "attn_k", kvd, qd}, {&L.wv, "attn_v", kvd, qd + kvd}}
	for _, w := range parts {
		if *w.dst, err = g.mat(p+w.name+".weight", w.rows, c.Dim, 0); err != nil {
			return err
		}
	}
	for _, w := range parts {
		if !g.has(p + w.name + ".bias") {
			continue
		}
		b, err := g.vec(p+w.name+".bias", w.rows)
		if err != nil {
			return err
		}
		if L.bqkv == nil {
			L.bqkv = make([]float32, qd+2*kvd)
		}
		copy(L.bqkv[w.off:], b)
	}
	return nil
}

// readFFN reads the dense gated FFN, split from ffn_up when fused.
func (g *ggufTensors) readFFN(L *rawLayer, p string, c *Config, spec *archSpec) error {
	var err error
	if L.wDown, err = g.mat(p+"ffn_down.weight", c.Dim, c.HiddenDim, 0); err != nil {
		return err
	}
	if spec.fusedGateUp {
		gu, err := g.mat(p+"ffn_up.weight", 2*c.HiddenDim, c.Dim, 0)
		if err != nil {
			return err
		}
		L.wGate, L.wUp = rowSlice(gu, 0, c.HiddenDim), rowSlice(gu, c.HiddenDim, 2*c.HiddenDim)
		return nil
	}
	if L.wGate, err = g.mat(p+"ffn_gate.weight", c.HiddenDim, c.Dim, 0); err != nil {
		return err
	}
	L.wUp, err = g.mat(p+"ffn_up.weight", c.HiddenDim, c.Dim, 0)
	return err
}

// readExperts reads the router and the stacked experts (ggml shape
// {cols, rows, NumExperts}), split into one matrix per expert, and the
// shared expert if the configuration has one.
func (g *ggufTensors) readExperts(L *rawLayer, p string, c *Config) error {
	var err error
	if L.router, err = g.mat(p+"ffn_gate_inp.weight", c.NumExperts, c.Dim, 0); err != nil {
		return err
	}
	for _, w := range []struct {
		dst        *[]tensor.Mat
		name       string
		rows, cols int
	}{
		{&L.exGate, "ffn_gate_exps", c.HiddenDim, c.Dim}, {&L.exUp, "ffn_up_exps", c.HiddenDim, c.Dim},
		{&L.exDown, "ffn_down_exps", c.Dim, c.HiddenDim},
	} {
		all, err := g.mat(p+w.name+".weight", w.rows, w.cols, c.NumExperts)
		if err != nil {
			return err
		}
		*w.dst = make([]tensor.Mat, c.NumExperts)
		for e := range *w.dst {
			(*w.dst)[e] = rowSlice(all, e*w.rows, (e+1)*w.rows)
		}
	}
	if sd := c.SharedExpertDim; sd > 0 {
		if L.shGateInp, err = g.vec(p+"ffn_gate_inp_shexp.weight", c.Dim); err != nil {
			return err
		}
		for _, w := range []struct {
			dst        *tensor.Mat
			name       string
			rows, cols int
		}{{&L.shGate, "ffn_gate_shexp", sd, c.Dim}, {&L.shUp, "ffn_up_shexp", sd, c.Dim}, {&L.shDown, "ffn_down_shexp", c.Dim, sd}} {
			if *w.dst, err = g.mat(p+w.name+".weight", w.rows, w.cols, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowSlice returns rows [r0, r1) of m (a copy), whatever its type: the rows
// of a block-quantized matrix are whole blocks, len(Q)/Rows bytes each.
func rowSlice(m tensor.Mat, r0, r1 int) tensor.Mat {
	out := tensor.Mat{Rows: r1 - r0, Cols: m.Cols, Type: m.Type}
	if m.Type == tensor.F32 {
		out.F32 = slices.Clone(m.F32[r0*m.Cols : r1*m.Cols])
	} else {
		rb := len(m.Q) / m.Rows
		out.Q = slices.Clone(m.Q[r0*rb : r1*rb])
	}
	return out
}

// neoxPerm is the row order that turns a head of NEOX RoPE layout (pairs
// i, i+rot/2 of its first rot rows: llama.cpp's NEOX, HF's rotate_half)
// into the adjacent pairs (2i, 2i+1) the forward pass rotates: new row
// h·hd + 2i + j = old row h·hd + j·rot/2 + i; rows from rot on stay.
func neoxPerm(heads, hd, rot int) []int {
	perm := make([]int, heads*hd)
	for h := 0; h < heads; h++ {
		for i := 0; i < rot/2; i++ {
			for j := 0; j < 2; j++ {
				perm[h*hd+2*i+j] = h*hd + j*rot/2 + i
			}
		}
		for r := rot; r < hd; r++ {
			perm[h*hd+r] = h*hd + r
		}
	}
	return perm
}

// permuteRows returns m's rows in the order perm (new row r = old row
// perm[r]).
func permuteRows(m tensor.Mat, perm []int) tensor.Mat {
	out := tensor.Mat{Rows: m.Rows, Cols: m.Cols, Type: m.Type}
	if m.Type == tensor.F32 {
		out.F32 = make([]float32, len(m.F32))
		for r, o := range perm {
			copy(out.F32[r*m.Cols:(r+1)*m.Cols], m.F32[o*m.Cols:(o+1)*m.Cols])
		}
		return out
	}
	rb := len(m.Q) / m.Rows
	out.Q = make([]byte, len(m.Q))
	for r, o := range perm {
		copy(out.Q[r*rb:(r+1)*rb], m.Q[o*rb:(o+1)*rb])
	}
	return out
}

// permuteVec returns v in the order perm.
func permuteVec(v []float32, perm []int) []float32 {
	out := make([]float32, len(v))
	for r, o := range perm {
		out[r] = v[o]
	}
	return out
}

// neoxToPairs permutes a NEOX-RoPE layer's q and k (rows, biases and
// per-head norms alike) into the adjacent-pairs layout. Attention only
// sees q·k, which the same permutation of q and k leaves unchanged; v is
// not touched.
func neoxToPairs(L *rawLayer, c *Config) {
	hd, rot := c.HeadDim, c.RotaryDims()
	pq, pk := neoxPerm(c.NumHeads, hd, rot), neoxPerm(c.NumKVHeads, hd, rot)
	L.wq, L.wk = permuteRows(L.wq, pq), permuteRows(L.wk, pk)
	if L.bqkv != nil {
		qd, kvd := c.QDim(), c.KVDim()
		b := slices.Clone(L.bqkv)
		copy(b[:qd], permuteVec(L.bqkv[:qd], pq))
		copy(b[qd:qd+kvd], permuteVec(L.bqkv[qd:qd+kvd], pk))
		L.bqkv = b
	}
	if L.qNorm != nil {
		ph := neoxPerm(1, hd, rot)
		L.qNorm, L.kNorm = permuteVec(L.qNorm, ph), permuteVec(L.kNorm, ph)
	}
}
