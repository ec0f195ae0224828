// Package safetensors reads Hugging Face safetensors files: the 8-byte
// little-endian header length, the JSON header (dtype, shape, data_offsets
// per tensor, optional "__metadata__" of strings), and the tensor data, with
// ordinary reads (no mmap): a tensor at a time, or all of it into memory. OpenDir reads a model directory,
// sharded through model.safetensors.index.json or not.
//
//	f, err := safetensors.ReadFile("model.safetensors") // header only
//	t := f.Tensor("model.embed_tokens.weight")
//	b, err := f.TensorData(t) // read from the file (or, after f.ReadData(), a slice of the data held)
//
// Malformed, truncated or unsupported input gives an error naming the file
// and the problem (wrapping ErrFormat), never a panic: the header length is
// checked against the file size and a 100 MB cap before it is read, every
// tensor's byte range against its dtype and shape and the data size.
//
// Counterpart: the safetensors Python package used by vLLM's loaders.
// Imports: nothing internal (a format leaf).
package safetensors
