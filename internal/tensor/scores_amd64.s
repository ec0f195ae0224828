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

// SOFF stores in slot min(i, lim)·st (lim, st registers): the byte
// offset of a tile's row i, the tile's last row repeated past lim.
#define SOFF(i, lim, st, slot) \
	MOVQ    $i, AX \
	CMPQ    lim, AX \
	CMOVQLT lim, AX \
	IMULQ   st, AX \
	MOVQ    AX, slot

// func scoresAVX512(out *float32, ldo int, q *float32, ldq, rows int, k *float32, ldk, keys, hd int)
// out[i·ldo+j] = Σ_{t<hd} q[i·ldq+t]·k[j·ldk+t] for i < rows, j < keys
// (all ≥ 1), in tiles of 4 rows × 4 keys: sixteen accumulators, Z(4r+j)
// for row r and key j, the queries in Z16..Z19, the keys in Z20..Z23.
// The tiles start every 4 rows (keys), the last at rows-4 (keys-4): a
// tile that overlaps the one before computes some sums again, to the
// same bits. With fewer than 4 rows (keys), a tile's missing rows (keys)
// repeat the last one: the missing rows are stored again over it, with
// its bits, the missing keys not at all (K2). The reduction is
// gemm4x6AVX512's for its first four columns.
TEXT ·scoresAVX512(SB), NOSPLIT, $104-72
	MOVQ hd+64(FP), CX
	STAILMASK(DX)
	// The offsets of a tile's rows 1..3 in q and out and of its keys
	// 1..3 in k (bytes).
	MOVQ rows+32(FP), R8
	DECQ R8
	MOVQ ldq+24(FP), R9
	SHLQ $2, R9
	SOFF(1, R8, R9, qo1-8(SP))
	SOFF(2, R8, R9, qo2-16(SP))
	SOFF(3, R8, R9, qo3-24(SP))
	MOVQ ldo+8(FP), R9
	SHLQ $2, R9
	SOFF(1, R8, R9, oo1-32(SP))
	SOFF(2, R8, R9, oo2-40(SP))
	SOFF(3, R8, R9, oo3-48(SP))
	MOVQ keys+56(FP), R8
	DECQ R8
	MOVQ ldk+48(FP), BX
	SHLQ $2, BX
	SOFF(1, R8, BX, ko1-56(SP))
	SOFF(2, R8, BX, ko2-64(SP))
	SOFF(3, R8, BX, ko3-72(SP))
	// The last tile's first row and key.
	MOVQ    rows+32(FP), AX
	SUBQ    $4, AX
	XORQ    DX, DX
	CMPQ    AX, DX
	CMOVQLT DX, AX
	MOVQ    AX, rl-80(SP)
	MOVQ    keys+56(FP), AX
	SUBQ    $4, AX
	CMPQ    AX, DX
	CMOVQLT DX, AX
	MOVQ    AX, jl-88(SP)
	// K2: a tile's valid keys, all four unless keys < 4.
	MOVQ    CX, R9
	MOVQ    keys+56(FP), CX
	MOVQ    $4, AX
	CMPQ    CX, AX
	CMOVQGT AX, CX
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K2
	MOVQ    R9, CX
	MOVQ    $0, r-96(SP)

scrow:
	// SI, R8, R9, R10: the tile's query rows; ob: its output row 0.
	MOVQ  r-96(SP), AX
	MOVQ  ldq+24(FP), SI
	IMULQ AX, SI
	SHLQ  $2, SI
	ADDQ  q+16(FP), SI
	MOVQ  SI, R8
	ADDQ  qo1-8(SP), R8
	MOVQ  SI, R9
	ADDQ  qo2-16(SP), R9
	MOVQ  SI, R10
	ADDQ  qo3-24(SP), R10
	IMULQ ldo+8(FP), AX
	SHLQ  $2, AX
	ADDQ  out+0(FP), AX
	MOVQ  AX, ob-104(SP)
	XORQ  DX, DX

sckey:
	// DX: the tile's first key; R11..R14: its keys.
	MOVQ   DX, R11
	IMULQ  BX, R11
	ADDQ   k+40(FP), R11
	MOVQ   R11, R12
	ADDQ   ko1-56(SP), R12
	MOVQ   R11, R13
	ADDQ   ko2-64(SP), R13
	MOVQ   R11, R14
	ADDQ   ko3-72(SP), R14
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	VXORPS Z12, Z12, Z12
	VXORPS Z13, Z13, Z13
	VXORPS Z14, Z14, Z14
	VXORPS Z15, Z15, Z15
	XORQ   AX, AX
	CMPQ   AX, CX
	JGE    sctail

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

	// Store the tile's rows, its valid keys (K2).
	MOVQ          ob-104(SP), DI
	LEAQ          (DI)(DX*4), DI
	VMOVUPS       X0, K2, (DI)
	MOVQ          DI, AX
	ADDQ          oo1-32(SP), AX
	VEXTRACTF32X4 $1, Z0, K2, (AX)
	MOVQ          DI, AX
	ADDQ          oo2-40(SP), AX
	VEXTRACTF32X4 $2, Z0, K2, (AX)
	MOVQ          DI, AX
	ADDQ          oo3-48(SP), AX
	VEXTRACTF32X4 $3, Z0, K2, (AX)

	// The next tile: 4 keys on, at most at the last.
	MOVQ    jl-88(SP), AX
	CMPQ    DX, AX
	JGE     scnextrow
	ADDQ    $4, DX
	CMPQ    DX, AX
	CMOVQGT AX, DX
	JMP     sckey

scnextrow:
	MOVQ    r-96(SP), DX
	MOVQ    rl-80(SP), AX
	CMPQ    DX, AX
	JGE     scdone
	ADDQ    $4, DX
	CMPQ    DX, AX
	CMOVQGT AX, DX
	MOVQ    DX, r-96(SP)
	JMP     scrow

scdone:
	VZEROUPPER
	RET
