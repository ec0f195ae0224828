package model

import "govllm/internal/tensor"

// Config is a Llama-family architecture.
type Config struct {
	Dim        int // hidden size
	HiddenDim  int // MLP intermediate size
	NumLayers  int
	NumHeads   int
	NumKVHeads int
	HeadDim    int // usually Dim / NumHeads
	VocabSize  int
	MaxSeqLen  int // trained context length (max_position_embeddings)
	RMSNormEps float32
	RopeTheta  float64
	// RopeScaling is Llama-3 style frequency scaling; nil means none.
	RopeScaling    *RopeScaling
	TiedEmbeddings bool

	// What an architecture family changes in the one forward pass (see
	// arch.go); every zero value means "as Llama".
	EmbedScale   float32    // multiplies the token embeddings on input (Gemma: √Dim); 0 = 1
	AttnScale    float32    // attention score scale; 0 = 1/√HeadDim
	AttnSoftcap  float32    // scores s → c·tanh(s/c), after the scale, before the softmax; 0 = none
	FinalSoftcap float32    // logits l → c·tanh(l/c); 0 = none
	Act          Activation // the gated FFN's activation: ActSiLU (0) or ActGELUTanh
	// SlidingWindow, when positive, makes the local layers' queries at
	// position p see only keys p' with p − p' < SlidingWindow. Layer l is
	// local iff SlidingPattern == 0 or l % SlidingPattern < SlidingPattern−1
	// (llama.cpp's swa pattern: 2 = layers 0, 2, 4, … local).
	SlidingWindow  int
	SlidingPattern int
	// RopeThetaLocal, when set and unlike RopeTheta, gives the local layers
	// their own RoPE: that base, without RopeScaling or RopeLinear (Gemma 3).
	RopeThetaLocal float64
	// RopeLinear is linear RoPE scaling: positions divided by it; 0 = none.
	// With RopeYaRN it is YaRN's factor (the interpolated positions').
	RopeLinear float64
	// RopeDims, when positive and below HeadDim, is how many leading values
	// of each head RoPE rotates (partial rotary: GGUF rope.dimension_count,
	// HF partial_rotary_factor); the rest pass unrotated. 0 = HeadDim.
	RopeDims int
	// RopeYaRN is YaRN scaling as llama.cpp computes it (ggml's rope_yarn):
	// nil = none.
	RopeYaRN *RopeYaRN
	// RopeOrigCtx is the training context before scaling (GGUF
	// rope.scaling.original_context_length, HF
	// original_max_position_embeddings): YaRN's correction range, and
	// LongRoPE's choice of factors. 0 = MaxSeqLen.
	RopeOrigCtx int
	// RopeAttnFactor multiplies RoPE's cos and sin, so the attention scores
	// by its square (llama.cpp's rope.scaling.attn_factor; LongRoPE's
	// attention scaling). 0 = 1.
	RopeAttnFactor float64
	// NumExperts > 0 makes every FFN a mixture of experts: a softmax router
	// over NumExperts, the top NumExpertsUsed experts (weights renormalized
	// to sum 1), each a gated FFN of width HiddenDim.
	NumExperts, NumExpertsUsed int
	// NoExpertRenorm keeps the chosen experts' router probabilities as they
	// are (Qwen2-MoE) instead of renormalizing them to sum 1.
	NoExpertRenorm bool
	// SharedExpertDim > 0 adds to every MoE layer a shared expert of that
	// width, run on every row and scaled by sigmoid(SharedGate·x) (Qwen2-MoE).
	SharedExpertDim int
}

// Activation is the gated FFN's activation function.
type Activation uint8

// Activations.
const (
	ActSiLU     Activation = iota // silu(gate)·up (SwiGLU)
	ActGELUTanh                   // gelu_tanh(gate)·up (GeGLU, Gemma)
)

// IsLocal reports whether layer l attends through the sliding window.
func (c *Config) IsLocal(l int) bool {
	return c.SlidingWindow > 0 && (c.SlidingPattern == 0 || l%c.SlidingPattern < c.SlidingPattern-1)
}

// RopeScaling holds Llama-3 "rope_type": "llama3" parameters.
type RopeScaling struct {
	Factor, LowFreqFactor, HighFreqFactor float64
	OriginalMaxPositionEmbeddings         int
}

// RopeYaRN holds YaRN's correction range: the frequencies whose
// wavelength fits fewer than BetaSlow times into the training context
// are interpolated (divided by the factor), those fitting more than
// BetaFast times are kept, and a linear ramp mixes the ones between.
type RopeYaRN struct {
	BetaFast, BetaSlow float64
}

// RotaryDims is how many values of each head RoPE rotates.
func (c *Config) RotaryDims() int {
	if c.RopeDims > 0 {
		return c.RopeDims
	}
	return c.HeadDim
}

// KVBytesPerToken is the physical KV storage one token needs in format
// codec (K and V over all layers; nil is tensor.KVF32).
func (c *Config) KVBytesPerToken(codec *tensor.KVCodec) int {
	if codec == nil {
		codec = tensor.KVF32
	}
	return 2 * c.NumLayers * c.NumKVHeads * codec.RowBytes(c.HeadDim)
}

// KVCache is physical paged KV storage: per layer, K and V of NumBlocks ×
// BlockSize token slots, each slot NumKVHeads·HeadDim values. A token at
// position p of a sequence lives in slot BlockTable[p/BlockSize]·BlockSize + p%BlockSize.
// A float32 cache (Codec tensor.KVF32) keeps them in K and V; the others
// in KQ and VQ, a slot being NumKVHeads rows of HeadDim values in the
// format, one after the other (Codec.RowBytes(HeadDim) bytes each), and
// attention reads them through kvread.go.
type KVCache struct {
	NumBlocks, BlockSize int
	Codec                *tensor.KVCodec
	K, V                 [][]float32 // float32: [layer][slot·kvDim + j]
	KQ, VQ               [][]byte    // F16, Q8_0: [layer][slot·rowBytes·NumKVHeads + …]
}

// NewKVCache allocates physical KV storage for numBlocks blocks of blockSize
// token slots, F32, zeroed.
func NewKVCache(cfg Config, numBlocks, blockSize int) *KVCache {
	return NewKVCacheOf(tensor.KVF32, cfg, numBlocks, blockSize)
}

// NewKVCacheOf is NewKVCache in format codec (nil: float32); the format
// must suit the model (CheckKVCacheDType).
func NewKVCacheOf(codec *tensor.KVCodec, cfg Config, numBlocks, blockSize int) *KVCache {
	if codec == nil {
		codec = tensor.KVF32
	}
	kv := &KVCache{NumBlocks: numBlocks, BlockSize: blockSize, Codec: codec}
	slots := numBlocks * blockSize
	for range cfg.NumLayers {
		if codec == tensor.KVF32 {
			kv.K = append(kv.K, make([]float32, slots*cfg.KVDim()))
			kv.V = append(kv.V, make([]float32, slots*cfg.KVDim()))
			continue
		}
		n := slots * cfg.NumKVHeads * codec.RowBytes(cfg.HeadDim)
		kv.KQ = append(kv.KQ, make([]byte, n))
		kv.VQ = append(kv.VQ, make([]byte, n))
	}
	return kv
}

// Seq is one sequence's contiguous run of tokens in a Batch.
type Seq struct {
	NumTokens  int     // tokens of this sequence in Batch.Tokens
	Start      int     // position of its first token in the batch
	BlockTable []int32 // physical block ids covering Start+NumTokens positions
	NeedLogits bool    // compute logits for its last token
	// NumLogits, with NeedLogits, is how many of its last tokens get
	// logits (0 counts as 1), in token order: a speculative step scores
	// the position of each drafted token and the one after them.
	NumLogits int
	// Hidden, when non-nil (NumTokens × Dim floats), receives the final
	// hidden state of each of its tokens: after the last layer's residual
	// add and the final norm, the vector the output head would read
	// (embedding requests pool it).
	Hidden []float32
}

// Batch is one flattened forward pass: every sequence's tokens back to back.
type Batch struct {
	Tokens []int32
	Seqs   []Seq
}

// NumLogits is the number of logits rows Forward writes: one per Seq with
// NeedLogits, NumLogits for one that asks for several.
func (b *Batch) NumLogits() int {
	k := 0
	for i := range b.Seqs {
		k += b.Seqs[i].logitRows()
	}
	return k
}

// logitRows is the number of the sequence's logits rows.
func (s *Seq) logitRows() int {
	if !s.NeedLogits {
		return 0
	}
	return max(1, s.NumLogits)
}

// Layer is one transformer block's weights. Wqkv holds Wq, Wk, Wv rows back to
// back (Dim + 2·KVDim rows); W13 the gate (w1) then up (w3) rows (2·HiddenDim
// rows); W2 is the down projection.
//
// The optional parts are nil or empty when the family has none: Bqkv the
// q|k|v biases (QDim + 2·KVDim, added after the projection); QNorm, KNorm
// the per-head RMSNorm weights (HeadDim) applied to q and k before RoPE;
// PostAttnNorm, PostFFNNorm the RMSNorms of each sub-layer's output before
// its residual add. A mixture-of-experts layer has Router (NumExperts ×
// Dim) and Experts instead of W13 and W2, and may have a Shared expert.
type Layer struct {
	AttnNorm, FFNNorm []float32
	Wqkv, Wo, W13, W2 tensor.Mat

	Bqkv                      []float32
	QNorm, KNorm              []float32
	PostAttnNorm, PostFFNNorm []float32
	Router                    tensor.Mat
	Experts                   []Expert
	Shared                    Expert    // the shared expert (Config.SharedExpertDim wide)
	SharedGate                []float32 // Dim: its gate's weights
}

// Expert is one expert's gated FFN: W13 the gate then up rows (2·HiddenDim),
// W2 the down projection.
type Expert struct {
	W13, W2 tensor.Mat
}

// Model is a loaded (or random) Llama-family model. It is immutable after
// construction and safe for concurrent Forward calls with separate
// Workspaces and KV caches.
type Model struct {
	Config Config
	Embed  tensor.Mat // VocabSize × Dim token embeddings (F32, Q8_0 or Q4_0, in GGML blocks)
	Layers []Layer
	Norm   []float32  // final RMSNorm weight
	Output tensor.Mat // VocabSize × Dim classifier (when tied, Embed's weights: shared in rows, else its own quantized or packed copy)

	ropeFactors []float32 // per-frequency divisors (GGUF rope_freqs.weight); nil means none
	rope        ropeTable
	ropeLocal   ropeTable // local (sliding-window) layers' table when RopeThetaLocal differs
}
