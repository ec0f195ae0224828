// Package gguf reads (and, for tests and tools, writes) GGUF v2/v3 files:
// the metadata key/value section (every value type, arrays included), the
// tensor infos (name, dims, ggml type, offset) and, on request, the tensor
// data, with ordinary reads (no mmap): one tensor at a time, or the whole
// data section into memory.
//
//	f, err := gguf.ReadFile("model.gguf")      // header, metadata, tensor infos
//	arch, err := f.String("general.architecture")
//	toks, err := f.Strings("tokenizer.ggml.tokens")
//	b, err := f.ReadTensor(f.Tensor("token_embd.weight")) // that tensor, read from the file
//	err = f.ReadTensorData()                   // or the data section, into memory
//	b, err = f.TensorData(f.Tensor("token_embd.weight"))   // then a slice of it
//
// Missing keys give an error wrapping ErrKeyNotFound (so optional keys are
// `errors.Is(err, gguf.ErrKeyNotFound)`); a key of the wrong type gives a
// *TypeError. Malformed, truncated or unsupported input gives an error naming
// the file and the problem, never a panic: every length is checked against
// the bytes remaining before anything is allocated.
//
// Counterpart: ggml's gguf.cpp (vLLM reads GGUF through the gguf Python
// package). Imports: nothing internal (a format leaf).
package gguf
