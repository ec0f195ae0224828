// Package tensor holds the CPU kernels: matrix multiplication over F32 and
// Q8_0 weights (SIMD where the CPU has it, a portable pure-Go fallback),
// RMSNorm, softmax, SiLU and the vector helpers attention is built from, and
// Pool, a set of persistent workers with a cheap barrier.
//
// vLLM counterpart: the CPU attention backend and kernels. Imports: nothing
// internal (a leaf).
package tensor
