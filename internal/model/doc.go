// Package model is the transformer forward pass and its weight loaders,
// for the Llama family and the architectures that differ from it by data.
//
// Loading:
//
//	m, err := model.Load(path, model.LoadOptions{})   // GGUF file, llama2.c .bin, or HF directory
//	m := model.NewDummy(cfg, tensor.F32, seed)          // deterministic random weights
//	cfg, err := model.DummyConfig("default")            // also "stories110m", "tinyllama-1.1b"
//
// Architectures (arch.go): one forward pass serves every family; what a
// family changes is data, an archSpec per GGUF general.architecture —
// llama and mistral (with Mixtral's experts when expert_count is set, and
// Mistral's sliding window on every layer), qwen2 (q|k|v biases), qwen3
// (per-head q/k RMSNorm before RoPE), qwen3moe (q/k norms, experts),
// qwen2moe (experts with their probabilities as they are, plus a shared
// expert gated by a sigmoid), phi3 (fused attn_qkv and gate|up ffn_up),
// gemma2 (√Dim embedding scale,
// GELU-tanh gated FFN, post-attention and post-FFN norms, attention and
// final logit soft-caps, a sliding window on every other layer) and
// gemma3 (q/k norms, local layers with their own RoPE base). The loader
// turns a spec and the file's metadata into Config's family fields (their
// zero values are Llama's) and Layer's optional parts (Bqkv, QNorm/KNorm,
// PostAttnNorm/PostFFNNorm, Router/Experts); the forward pass applies
// each where it is set. NEOX RoPE (pairs i, i+HeadDim/2) is a permutation
// of the q and k rows (and biases and norms) at load into the adjacent
// pairs the forward pass rotates. A load fails, naming it, on any metadata
// key of the architecture it did not read and on any tensor it did not
// use; an unknown architecture's error lists the supported ones. Phi-3's
// sliding_window is read and, as in llama.cpp, not applied. Biases other
// than q/k/v's are refused. As in llama.cpp's create_tensor_qkv, every
// architecture's q, k and v may come fused (attn_qkv) or apart, with
// optional biases.
//
// RoPE (rope.go, rope_load.go), as llama.cpp computes it: linear scaling
// (Gemma 3: its global layers only); Llama 3's per-frequency divisors
// (GGUF rope_freqs.weight, HF rope_type llama3); YaRN (rope.scaling.type
// yarn: factor, original_context_length, yarn_beta_fast/slow — which
// llama.cpp reads only for a few other architectures, and govllm for
// every one, as transformers and vLLM do — ggml's ramp between
// interpolated and original angles and its magnitude scale);
// LongRoPE/Phi-3 "su" (rope_factors_long/_short.weight or HF
// long_factor/short_factor; the long ones when the model's context exceeds
// the original one, as llama.cpp chooses by its context size; the
// attention factor rope.scaling.attn_factor, or HF's
// √(1 + ln s / ln original)); rope.scaling.attn_factor multiplies cos and
// sin for any type; partial rotary (rope.dimension_count, HF
// partial_rotary_factor: only the first dims of a head rotate, NEOX or
// adjacent pairs) where llama.cpp allows it (phi3, gemma2, gemma3); and
// HF's dynamic NTK scaling, which llama.cpp does not have, as vLLM's
// DynamicNTKScalingRotaryEmbedding computes it (the base raised once to
// base·(f² − f + 1)^(d/(d−2))). Any other scaling type, and any scaling
// key or rope_scaling field not read (yarn_log_multiplier, mscale,
// attention_factor of YaRN, ...), fails the load naming it.
// TestRopeGoldens checks each against llama.cpp (testdata/rope).
//
// Path detection: a directory with config.json and *.safetensors (HF
// LlamaForCausalLM / MistralForCausalLM / Qwen2ForCausalLM /
// Qwen3ForCausalLM / Phi3ForCausalLM / Gemma2ForCausalLM /
// Gemma3ForCausalLM / MixtralForCausalLM / Qwen2MoeForCausalLM /
// Qwen3MoeForCausalLM, sharded through model.safetensors.index.json; the
// HF names are mapped to the GGUF ones and read by the same family
// readers; every tensor must be used); a file starting with the GGUF
// magic; any other file is read as a llama2.c checkpoint (legacy v0
// header, or the "ak42" v1 header). F16/BF16 weights become F32 at load;
// every GGUF matrix in a block format tensor.CodecByGGML knows (Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K..Q6_K, IQ4_XS) stays in that format,
// each tensor in its own (a Q4_K_M file holds Q4_K, Q5_K and Q6_K; Q/K/V or
// gate/up of different formats fuse into a tensor.Stacked matrix), and
// other types are refused naming the tensor. At load the matmul weights
// are packed for the level's kernels (tensor.PackQ4, PackQ8, PackBlocks:
// Q4_0 packed where the CPU has the Q4_0 kernels, else expanded exactly to
// Q8_0; Q3_K..Q6_K packed at avx512; Q4_0 token embeddings stay Q4_0 for
// the row lookups, unless a tied head expanded to GGML Q8_0 blocks lends
// them its expansion). LoadOptions.Quantize (and NewDummyQuantized)
// quantizes F32 matrices at load as llama-quantize's file type of that name
// (QuantizationNames; per-tensor mix rules in quantmix.go, blocks by
// tensor.Codec.Quantize); q8_0 and q4_0 quantize every matmul weight whose
// input width is a multiple of 32 and keep the embeddings. Files are read with ordinary reads (no mmap).
//
// RoPE angles follow GGML's float32 arithmetic (ggml_rope_cache_init,
// rope_yarn) for every model but HF Llama 3 scaling, and RMSNorm its
// float32 mean and scale:
// with the matmuls in GGML's order this reproduces llama.cpp's logits on
// its synthetic goldens to ~1e-6 (TestSyntheticGoldens).
//
// RoPE angles are computed as llama.cpp's CPU backend computes them
// (the position in float32 times base^(−2/RotaryDims) once per frequency, in
// float32; rope.go), except with HF Llama 3 scaling: exact angles would
// part from llama.cpp's on long prompts, where Q8_0's activation rounding
// amplifies the difference.
//
// Q and K weights are kept in the "adjacent pairs" RoPE layout of llama2.c
// and GGUF (x[2i], x[2i+1] rotate together); HF checkpoints, stored for
// rotate_half, are un-permuted at load. Wq/Wk/Wv are fused into one matrix
// (rows concatenated), as are the gate and up projections, so a layer is
// four matrix multiplications.
//
// Forward:
//
//	ws := m.NewWorkspace(maxTokens)            // reusable; grows if a batch is larger
//	kv := model.NewKVCache(m.Config, numBlocks, blockSize)
//	err := m.Forward(ws, pool, &batch, kv, logits)
//
// A Batch is flattened: all tokens of all sequences go through the matrix
// multiplications together. Each token's K and V are written to its paged
// slot BlockTable[pos/BlockSize]·BlockSize + pos%BlockSize, then every token
// attends causally to positions 0..pos of its own sequence (GQA: NumHeads /
// NumKVHeads query heads share a KV head); in a sliding-window layer
// (Config.IsLocal) the keys before pos − SlidingWindow + 1 get weight 0 —
// masking by position, exact whatever the chunking of a prefill; a lone
// row (decode, GQA groups) also skips the KV blocks wholly before its
// window, with the same bits. The KV blocks that fall out of every
// layer's window are not freed: the cache holds the whole sequence. Logits are computed only for the
// last token of each Seq with NeedLogits, laid out [k × VocabSize] in Seq
// order (k = number of such Seqs); only those rows take the final norm and
// the output head. A Seq with a Hidden buffer receives the final hidden
// state (last residual add, final norm) of each of its tokens, row by row
// as the logits path computes them (hidden.go), for embedding requests. A mixture-of-experts layer (moe.go) routes each row
// to its NumExpertsUsed experts (softmax over the router's logits, top k,
// weights renormalized) and runs each expert once, on the rows routed to
// it; experts no row chose are not computed.
//
// Parallelism: the matrix multiplications go through pool.MatMul, in
// blocks of rows whose activations fit half a core's L2 cache (at least 64
// rows: a decode step is one block; a 2,048-token prefill is many, each
// read from L2 for every panel of W rows instead of from L3); the
// per-row phases (norms, RoPE and the KV write, SwiGLU) and attention are
// split over the pool with ParallelFor once a batch is big enough to pay
// for the hand-off. Attention work units are (KV head, rows), KV-head-major,
// split into chunks of equal cost: the query heads that share a KV head
// (GQA) are computed together so each K/V row is read once per group, and
// every thread gets an equal share of a prefill's causal triangle. With
// one query head per KV head a unit holds up to 8 consecutive rows of a
// prefill. Scores run one kernel call per KV block (per 16 keys of a
// larger one): the group's queries (or the unit's rows) against the
// block's keys, scaled, through tensor.ScoresBlocks (DotStrided and Scale
// for a lone row and head); the weighted sum of V is AxpyBlocks over the
// blocks the unit's rows (in fours) or a group's heads (in fours) see
// whole, AxpyStrided4 for a group's partial last block, else AxpyStrided
// per head and row. Each score and sum is computed in the order a lone
// row's kernel call gives it.
//
// KV cache formats (--kv-cache-dtype; api.go, kvread.go): NewKVCacheOf
// keeps K and V as float32 (tensor.KVF32), IEEE half precision
// (tensor.KVF16) or GGML Q8_0 blocks (tensor.KVQ8_0, heads a multiple of
// 32: CheckKVCacheDType); KVBytesPerToken(codec) sizes the cache. A token's
// K and V rows are encoded as they are written; attention decodes the
// rows of one KV head that a unit reads, block by block, into a per-chunk
// float32 scratch laid out like the float32 cache and runs the same
// kernels on it, so its result is bit for bit attention over a float32
// cache holding the decoded values (TestAttentionKVFormats) and stays
// batch-invariant.
//
// Workspace.Phases, when set, accumulates Forward's wall time by phase
// (matrix products, attention, per-row phases, logits) for benchmarks and
// diagnostics.
//
// Batch invariance: every row is computed on its own, by the same code, in
// an order fixed by the row's own position; nothing a row computes depends
// on which other rows or sequences share the batch or how its prompt was
// chunked. The whole forward is batch-invariant when tensor.Pool.MatMul's
// output rows do not depend on the other rows of x. The jobs handed to the pool are bound once per
// Workspace, so Forward itself allocates nothing once the Workspace has seen
// a batch of the same size (tensor.Pool.MatMul may still allocate).
//
// A Workspace and a KVCache belong to one caller at a time; a Model is
// immutable and may be shared.
//
// vLLM counterpart: model_executor/models/llama.py and the model loaders.
// Imports: internal/tensor, internal/gguf, internal/safetensors and the
// standard library; never the tokenizer, net/http, Prometheus or the
// environment.
package model
