// Package tensor holds the CPU kernels: matrix multiplication over F32 and
// Q8_0 weights (SIMD where the CPU has it, a portable pure-Go fallback),
// RMSNorm, softmax, SiLU and the vector helpers attention is built from, and
// Pool, a set of persistent workers with a cheap barrier.
//
// vLLM counterpart: the CPU attention backend and kernels. Imports: nothing
// internal (a leaf); golang.org/x/sys/cpu for feature detection.
//
// # Kernel levels
//
// At start-up the best level the CPU supports is chosen once:
//
//   - avx512: AVX-512 F/BW/VL + VNNI. F32 GEMM is a 4×6 register-blocked
//     micro-kernel (24 zmm accumulators, each W load reused by 4 activation
//     rows), cache-blocked (gemm.go): columns in blocks of at most 1024 so
//     that the 6-row W block stays in L1 while the kernel runs over all x
//     tiles of a row block (x rows packed per tile into one sequential stream,
//     one column block kept in L2), the panels of 48 W rows (192 with more
//     than two column blocks) taking turns over each column block, each tile's
//     accumulators parked in a scratch buffer between column blocks; the
//     kernel prefetches the next W block into L2. The matvec (fewer than 4
//     activation rows, and the rows the GEMM tiles leave over) streams 8 W
//     rows with one accumulator each; column tails use masked loads. Packed
//     Q8_0 (PackQ8) uses VPDPBUSD on 16 interleaved W rows per zmm: tiles of
//     3 row groups × 4 activation rows, and 4 groups × 1 row for decode;
//     GGML-layout Q8_0 two blocks per zmm (1×4 kernel for decode, 4×4 for
//     n ≥ 4).
//   - avx2: AVX2 + FMA + F16C. 4×3 F32 GEMM, 1×8 matvec, Q8_0 via
//     VPMADDUBSW/VPMADDWD with the sign trick (GGML layout only: PackQ8
//     leaves matrices unpacked at this level; packed ones run in Go).
//   - go: portable Go, always built; the only level with the purego build
//     tag or off amd64.
//
// # Batch invariance of F32 MatMul
//
// Each level sums every F32 output Σ_c x[c]·w[c] in one canonical order,
// which its GEMM, matvec (8 and 4 rows) and single-row kernels all follow:
//
//   - avx512: one 16-lane accumulator per output, FMA over c in steps of
//     16 from 0, the last Cols%16 columns as one more FMA of zero-masked
//     loads; then lane i += lane i+8 and ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)).
//   - avx2: the same with 8 lanes over the first Cols&^7 columns (no fold),
//     plus the running sum of the remaining columns' products in order.
//   - go: one running sum per output in column order, products rounded to
//     float32 (never fused).
//
// Register blocking is across x rows and W rows only, never across c, and
// the GEMM's column blocks only park the 16 lane sums in memory (exactly)
// and resume them, so out[i][r] is bit-identical for a given x row and W
// row whatever n, the row's place in a tile, the blocking, the thread
// count or the row split. (The avx512 GEMM reduces two accumulators per
// zmm, with the same additions as the matvec's ymm reduction.) MatMulStrided
// and DotStrided (from 16 columns) use the same kernels. Q8_0 MatMul is
// batch invariant too: in GGML layout its 1-row and 4-row kernels agree bit
// for bit; in the packed layout every output is one exact int32 sum per
// block, then acc += float32(sum)·(dw·dx) in block order (q8pack.go).
// Dot and the other helpers are not bound to a canonical order.
//
// The avx512 level also has Softmax and SwiGLU (a Cephes expf polynomial,
// 16 lanes), the Q8_0 activation quantizer, and AxpyStrided; Dot and Axpy
// use a plain loop below 16 floats, where a kernel call costs more.
// DotStrided and AxpyStrided serve attention: a query against many KV-cache
// slots, and the weighted sum of value rows, in one call.
//
// Tests run every level the machine supports against a float64 reference.
//
// # Q8_0
//
// Mat.Q holds GGML Q8_0 blocks unchanged (34 bytes: float16 scale, 32 int8).
// MatMul quantizes the activation rows to Q8_0 once per call (as llama.cpp
// does: round half away from zero, float16-rounded scale), then sums
// int8·int8 block products scaled by both blocks' scales. Results therefore
// differ from a float dot product with the dequantized weights by the
// activation's quantization error (about 0.4% of each block's max).
// GGML quantizers never store -128; if a file does, the GGML-layout 1-row
// kernels (sign trick) treat it as +128 where the activation is negative;
// the packed kernels are exact.
//
// PackQ8 (called once at load on the matmul weights) rewrites a Q8_0
// matrix into groups of 16 rows whose blocks are interleaved four columns
// at a time (64 bytes = 4 columns × 16 rows, weights stored +128 as
// unsigned bytes) with the float16 scales apart, the same size as the GGML
// blocks. One VPDPBUSD then multiplies 4 columns of 16 rows by 4 broadcast
// activation bytes, the int32 sums start at −128·Σx of the activation block
// (making them exact), and there is no horizontal reduction: results land
// as 16 consecutive outputs. The packed results differ from the GGML-layout
// kernels' in the last bits (another summation order), not in accuracy.
//
// # Invariants
//
//   - MatMul writes exactly n×w.Rows outputs and reads n×w.Cols inputs; it
//     panics on short slices or Cols not a multiple of 32 for Q8_0.
//   - A Pool is driven by one goroutine at a time (see Pool); nil and the
//     zero Pool run on the caller. Below about 64K multiply-adds a MatMul
//     runs on the caller alone, because the hand-off costs more.
//   - Outputs are deterministic for a given level: each output element is
//     computed by one thread in its level's canonical order, so it does not
//     depend on n, the thread count or its row's place (see above).
package tensor
