// Package model is the Llama-family forward pass and its weight loaders.
//
// Loading:
//
//	m, err := model.Load(path, model.LoadOptions{})   // GGUF file, llama2.c .bin, or HF directory
//	m := model.NewDummy(cfg, tensor.F32, seed)          // deterministic random weights
//	cfg, err := model.DummyConfig("default")            // also "stories110m", "tinyllama-1.1b"
//
// Path detection: a directory with config.json and *.safetensors (HF
// LlamaForCausalLM / MistralForCausalLM, sharded through
// model.safetensors.index.json); a file starting with the GGUF magic; any
// other file is read as a llama2.c checkpoint (legacy v0 header, or the
// "ak42" v1 header). F16/BF16 weights become F32 at load; GGUF Q8_0 weights
// stay Q8_0; LoadOptions.Quantize = "q8_0" quantizes F32 matrices at load.
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
// NumKVHeads query heads share a KV head). Logits are computed only for the
// last token of each Seq with NeedLogits, laid out [k × VocabSize] in Seq
// order (k = number of such Seqs). Forward allocates nothing once the
// Workspace has seen a batch of the same size. A Workspace and a KVCache
// belong to one caller at a time; a Model is immutable and may be shared.
//
// vLLM counterpart: model_executor/models/llama.py and the model loaders.
// Imports: internal/tensor, internal/gguf, internal/safetensors and the
// standard library; never the tokenizer, net/http, Prometheus or the
// environment.
package model
