//go:build amd64 && !purego

#include "textflag.h"

// The attention-score kernel: a few query rows against a few keys, each
// score in the canonical order of the AVX-512 F32 kernels (see
// avx512_amd64.s: one zmm FMA chain per output over the columns in steps
// of 16, the last k%16 columns as one more FMA of zero-masked loads, then
// lane i + lane i+8 and ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7))), without
// the GEMM's planning and packing.

// STAILMASK takes k in CX, sets K1 to the low k%16 bits and leaves k
// rounded down to a multiple of 16 in CX; it clobbers AX and t.
#define STAILMASK(t) \
	MOVQ  CX, AX \
	ANDQ  $-16, AX \
	ANDQ  $15, CX \
	MOVL  $1, t \
	SHLL  CX, t \
	DECL  t \
	KMOVW t, K1 \
	MOVQ  AX, CX

// SFOLD2 sets d to the halves of zmm p and q folded (lane i + lane i+8),
// p's in the low 256 bits and q's in the high 256.
#define SFOLD2(p, q, d) \
	VSHUFF64X2 $0x44, q, p, Z24 \
	VSHUFF64X2 $0xEE, q, p, Z25 \
	VADDPS     Z25, Z24, d

// SHADD2 sets d to VHADDPS of x and y for all four 128-bit lanes: per
// lane x0+x1, x2+x3, y0+y1, y2+y3.
#define SHADD2(x, y, d) \
	VSHUFPS $0x88, y, x, Z24 \
	VSHUFPS $0xDD, y, x, Z25 \
	VADDPS  Z25, Z24, d

// SROW multiplies query row x into the four key accumulators a0..a3.
#define SROW(x, a0, a1, a2, a3) \
	VFMADD231PS Z20, x, a0 \
	VFMADD231PS Z21, x, a1 \
	VFMADD231PS Z22, x, a2 \
	VFMADD231PS Z23, x, a3

// func scoresAVX512(out *float32, ldo int, q *float32, ldq, rows int, k *float32, ldk, keys, hd int)
// out[i·ldo+j] = Σ_{t<hd} q[i·ldq+t]·k[j·ldk+t] for i < rows, j < keys
// (all ≥ 1), in tiles of 4 rows × 4 keys: sixteen accumulators, Z(4r+j)
// for row r and key j, the queries in Z16..Z19, the keys in Z20..Z23. A
// tile's missing rows and keys repeat its last ones (their sums are not
// stored). The reduction is gemm4x6AVX512's for its first four columns.
TEXT ·scoresAVX512(SB), NOSPLIT, $24-72
	MOVQ hd+64(FP), CX
	STAILMASK(DX)
	MOVQ CX, kv-24(SP)
	MOVQ $0, r-8(SP)

scrow:
	// SI, R8, R9, R10: the tile's query rows.
	MOVQ    ldq+24(FP), BX
	SHLQ    $2, BX
	MOVQ    r-8(SP), AX
	IMULQ   BX, AX
	MOVQ    q+16(FP), SI
	ADDQ    AX, SI
	MOVQ    rows+32(FP), DX
	SUBQ    r-8(SP), DX
	LEAQ    (SI)(BX*1), R8
	CMPQ    DX, $2
	CMOVQLT SI, R8
	LEAQ    (R8)(BX*1), R9
	CMPQ    DX, $3
	CMOVQLT R8, R9
	LEAQ    (R9)(BX*1), R10
	CMPQ    DX, $4
	CMOVQLT R9, R10
	MOVQ    $0, j-16(SP)

sckey:
	// R11..R14: the tile's keys; K2: its valid keys' lanes.
	MOVQ    ldk+48(FP), BX
	SHLQ    $2, BX
	MOVQ    j-16(SP), AX
	IMULQ   BX, AX
	MOVQ    k+40(FP), R11
	ADDQ    AX, R11
	MOVQ    keys+56(FP), DX
	SUBQ    j-16(SP), DX
	LEAQ    (R11)(BX*1), R12
	CMPQ    DX, $2
	CMOVQLT R11, R12
	LEAQ    (R12)(BX*1), R13
	CMPQ    DX, $3
	CMOVQLT R12, R13
	LEAQ    (R13)(BX*1), R14
	CMPQ    DX, $4
	CMOVQLT R13, R14
	MOVQ    $4, CX
	CMPQ    DX, CX
	CMOVQLT DX, CX
	MOVL    $1, R15
	SHLL    CX, R15
	DECL    R15
	KMOVW   R15, K2
	MOVQ    kv-24(SP), CX
	VXORPS  Z0, Z0, Z0
	VXORPS  Z1, Z1, Z1
	VXORPS  Z2, Z2, Z2
	VXORPS  Z3, Z3, Z3
	VXORPS  Z4, Z4, Z4
	VXORPS  Z5, Z5, Z5
	VXORPS  Z6, Z6, Z6
	VXORPS  Z7, Z7, Z7
	VXORPS  Z8, Z8, Z8
	VXORPS  Z9, Z9, Z9
	VXORPS  Z10, Z10, Z10
	VXORPS  Z11, Z11, Z11
	VXORPS  Z12, Z12, Z12
	VXORPS  Z13, Z13, Z13
	VXORPS  Z14, Z14, Z14
	VXORPS  Z15, Z15, Z15
	XORQ    AX, AX
	CMPQ    AX, CX
	JGE     sctail

scloop:
	VMOVUPS (R11)(AX*4), Z20
	VMOVUPS (R12)(AX*4), Z21
	VMOVUPS (R13)(AX*4), Z22
	VMOVUPS (R14)(AX*4), Z23
	VMOVUPS (SI)(AX*4), Z16
	VMOVUPS (R8)(AX*4), Z17
	VMOVUPS (R9)(AX*4), Z18
	VMOVUPS (R10)(AX*4), Z19
	SROW(Z16, Z0, Z1, Z2, Z3)
	SROW(Z17, Z4, Z5, Z6, Z7)
	SROW(Z18, Z8, Z9, Z10, Z11)
	SROW(Z19, Z12, Z13, Z14, Z15)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     scloop

sctail:
	KORTESTW  K1, K1
	JZ        screduce
	VMOVUPS.Z (R11)(AX*4), K1, Z20
	VMOVUPS.Z (R12)(AX*4), K1, Z21
	VMOVUPS.Z (R13)(AX*4), K1, Z22
	VMOVUPS.Z (R14)(AX*4), K1, Z23
	VMOVUPS.Z (SI)(AX*4), K1, Z16
	VMOVUPS.Z (R8)(AX*4), K1, Z17
	VMOVUPS.Z (R9)(AX*4), K1, Z18
	VMOVUPS.Z (R10)(AX*4), K1, Z19
	SROW(Z16, Z0, Z1, Z2, Z3)
	SROW(Z17, Z4, Z5, Z6, Z7)
	SROW(Z18, Z8, Z9, Z10, Z11)
	SROW(Z19, Z12, Z13, Z14, Z15)

screduce:
	// Rows 0 and 1 of each key, then rows 2 and 3, two accumulators per
	// zmm; two pairwise levels within 128-bit lanes leave, per row, the
	// 0..3 and the 4..7 partials of its four keys in two 128-bit lanes,
	// which the last add joins: row r's four scores in 128-bit lane r.
	SFOLD2(Z0, Z4, Z0)
	SFOLD2(Z1, Z5, Z1)
	SFOLD2(Z2, Z6, Z2)
	SFOLD2(Z3, Z7, Z3)
	SFOLD2(Z8, Z12, Z8)
	SFOLD2(Z9, Z13, Z9)
	SFOLD2(Z10, Z14, Z10)
	SFOLD2(Z11, Z15, Z11)
	SHADD2(Z0, Z1, Z0)
	SHADD2(Z2, Z3, Z2)
	SHADD2(Z8, Z9, Z8)
	SHADD2(Z10, Z11, Z10)
	SHADD2(Z0, Z2, Z0)
	SHADD2(Z8, Z10, Z8)
	VSHUFF64X2 $0x88, Z8, Z0, Z24
	VSHUFF64X2 $0xDD, Z8, Z0, Z25
	VADDPS     Z25, Z24, Z0

	// Store the tile's valid rows, its valid keys (K2).
	MOVQ          ldo+8(FP), BX
	SHLQ          $2, BX
	MOVQ          r-8(SP), AX
	IMULQ         BX, AX
	MOVQ          out+0(FP), DI
	ADDQ          AX, DI
	MOVQ          j-16(SP), AX
	LEAQ          (DI)(AX*4), DI
	MOVQ          rows+32(FP), DX
	SUBQ          r-8(SP), DX
	VMOVUPS       X0, K2, (DI)
	CMPQ          DX, $2
	JLT           scnext
	ADDQ          BX, DI
	VEXTRACTF32X4 $1, Z0, K2, (DI)
	CMPQ          DX, $3
	JLT           scnext
	ADDQ          BX, DI
	VEXTRACTF32X4 $2, Z0, K2, (DI)
	CMPQ          DX, $4
	JLT           scnext
	ADDQ          BX, DI
	VEXTRACTF32X4 $3, Z0, K2, (DI)

scnext:
	MOVQ j-16(SP), AX
	ADDQ $4, AX
	MOVQ AX, j-16(SP)
	CMPQ AX, keys+56(FP)
	JLT  sckey
	MOVQ r-8(SP), AX
	ADDQ $4, AX
	MOVQ AX, r-8(SP)
	CMPQ AX, rows+32(FP)
	JLT  scrow
	VZEROUPPER
	RET
