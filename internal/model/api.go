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
}

// RopeScaling holds Llama-3 "rope_type": "llama3" parameters.
type RopeScaling struct {
	Factor, LowFreqFactor, HighFreqFactor float64
	OriginalMaxPositionEmbeddings         int
}

// KVBytesPerToken is the physical KV storage one token needs (F32 K and V
// over all layers).
func (c *Config) KVBytesPerToken() int { return 2 * c.NumLayers * c.NumKVHeads * c.HeadDim * 4 }

// KVCache is physical paged KV storage: per layer, K and V of NumBlocks ×
// BlockSize token slots, each slot NumKVHeads·HeadDim floats. A token at
// position p of a sequence lives in slot BlockTable[p/BlockSize]·BlockSize + p%BlockSize.
type KVCache struct {
	NumBlocks, BlockSize int
	K, V                 [][]float32 // [layer][slot·kvDim + j]
}

// Seq is one sequence's contiguous run of tokens in a Batch.
type Seq struct {
	NumTokens  int     // tokens of this sequence in Batch.Tokens
	Start      int     // position of its first token in the batch
	BlockTable []int32 // physical block ids covering Start+NumTokens positions
	NeedLogits bool    // compute logits for its last token
}

// Batch is one flattened forward pass: every sequence's tokens back to back.
type Batch struct {
	Tokens []int32
	Seqs   []Seq
}

// ensure the import stays used until Forward lands.
var _ = tensor.F32
