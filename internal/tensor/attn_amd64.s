//go:build amd64 && !purego

#include "textflag.h"
#include "avx512_amd64.h"

// The attention kernels of a prefill tile. scoresAVX512: a few query rows
// against a few keys, each score in the canonical order of the AVX-512
// F32 kernels (see avx512_amd64.s: one zmm FMA chain per output over the
// columns in steps of 16, the last k%16 columns as one more FMA of
// zero-masked loads, then lane i + lane i+8 and ((l0+l1)+(l2+l3)) +
// ((l4+l5)+(l6+l7))), without the GEMM's planning and packing.
// axpyBlocksAVX512: the weighted sums of value rows over a block table, in
// axpyStrided4AVX512's order.

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

// func scoresAVX512(out *float32, ldo int, q *float32, ldq, rows int, k *float32, ldk, keys, hd int, scale float32)
// out[i·ldo+j] = Σ_{t<hd} q[i·ldq+t]·k[j·ldk+t] for i < rows, j < keys
// (all ≥ 1), in tiles of 4 rows × 4 keys: sixteen accumulators, Z(4r+j)
// for row r and key j, the queries in Z16..Z19, the keys in Z20..Z23.
// The tiles start every 4 rows (keys), the last at rows-4 (keys-4): a
// tile that overlaps the one before computes some sums again, to the
// same bits. With fewer than 4 rows (keys), a tile's missing rows (keys)
// repeat the last one: the missing rows are stored again over it, with
// its bits, the missing keys not at all (K2). The reduction is
// gemm4x6AVX512's for its first four columns. Each sum is then
// multiplied by scale (Z26), as Scale would (1 leaves it as it is).
TEXT ·scoresAVX512(SB), NOSPLIT, $104-76
	VBROADCASTSS scale+72(FP), Z26
	MOVQ hd+64(FP), CX
	TAILMASK(DX)
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
	FOLD2(Z0, Z4, Z0)
	FOLD2(Z1, Z5, Z1)
	FOLD2(Z2, Z6, Z2)
	FOLD2(Z3, Z7, Z3)
	FOLD2(Z8, Z12, Z8)
	FOLD2(Z9, Z13, Z9)
	FOLD2(Z10, Z14, Z10)
	FOLD2(Z11, Z15, Z11)
	HADD2(Z0, Z1, Z0)
	HADD2(Z2, Z3, Z2)
	HADD2(Z8, Z9, Z8)
	HADD2(Z10, Z11, Z10)
	HADD2(Z0, Z2, Z0)
	HADD2(Z8, Z10, Z8)
	VSHUFF64X2 $0x88, Z8, Z0, Z24
	VSHUFF64X2 $0xDD, Z8, Z0, Z25
	VADDPS     Z25, Z24, Z0
	VMULPS     Z26, Z0, Z0

	// Store the tile's rows, its valid keys (K2). Each row goes through
	// a register to a masked VMOVUPS, whose masked-off floats never
	// fault: a masked VEXTRACTF32X4 to memory may fault on them (it has
	// no fault suppression), past the end of out.
	MOVQ          ob-104(SP), DI
	LEAQ          (DI)(DX*4), DI
	VMOVUPS       X0, K2, (DI)
	VEXTRACTF32X4 $1, Z0, X1
	VEXTRACTF32X4 $2, Z0, X2
	VEXTRACTF32X4 $3, Z0, X3
	MOVQ          DI, AX
	ADDQ          oo1-32(SP), AX
	VMOVUPS       X1, K2, (AX)
	MOVQ          DI, AX
	ADDQ          oo2-40(SP), AX
	VMOVUPS       X2, K2, (AX)
	MOVQ          DI, AX
	ADDQ          oo3-48(SP), AX
	VMOVUPS       X3, K2, (AX)

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

// func axpyBlocksAVX512(y *float32, ldy int, a *float32, lda int, v *float32, bt *int32, nb, blk, stride, bs, hd, groups int)
// axpyStrided4AVX512 for each of nb blocks of bs value rows in turn, for
// each of groups groups of four rows (y and a 4·ldy, 4·lda apart): block
// b's rows start at v[bt[b]·blk] (stride apart) and take the weights
// a[r·lda + b·bs ..]. Each block's sum is exactly that kernel's (per 16
// columns: four chains by key mod 4 from y, 0, 0, 0, the last bs%4 keys
// into the first, then (c0+c1) + (c2+c3)), without a call per block, and
// the groups take a block in turn, while its rows are in L1. Row r's
// chains are Z(4r)..Z(4r+3), the value rows Z16..Z19.
TEXT ·axpyBlocksAVX512(SB), NOSPLIT, $32-96
	MOVQ ldy+8(FP), DX
	SHLQ $2, DX
	MOVQ lda+24(FP), AX
	SHLQ $2, AX
	LEAQ (AX)(AX*2), R14
	MOVQ stride+64(FP), BX
	SHLQ $2, BX
	LEAQ (BX)(BX*2), R9
	MOVQ hd+80(FP), CX
	MOVQ blk+56(FP), R10
	SHLQ $2, R10
	MOVQ R10, bb-16(SP)
	MOVQ a+16(FP), SI
	MOVQ $0, b-8(SP)

abblk:
	// R8: block b's first value row; SI (wb): row 0's weights for it.
	MOVQ    b-8(SP), R10
	MOVQ    bt+40(FP), R8
	MOVLQSX (R8)(R10*4), R8
	IMULQ   bb-16(SP), R8
	ADDQ    v+32(FP), R8
	MOVQ    SI, wb-24(SP)
	MOVQ    y+0(FP), DI
	MOVQ    groups+88(FP), R10
	MOVQ    R10, grp-32(SP)

abgrp:
	XORQ R10, R10

abcol:
	LEAQ    (DI)(R10*4), R12
	VMOVUPS (R12), Z0
	ADDQ    DX, R12
	VMOVUPS (R12), Z4
	ADDQ    DX, R12
	VMOVUPS (R12), Z8
	ADDQ    DX, R12
	VMOVUPS (R12), Z12
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	VPXORD  Z9, Z9, Z9
	VPXORD  Z10, Z10, Z10
	VPXORD  Z11, Z11, Z11
	VPXORD  Z13, Z13, Z13
	VPXORD  Z14, Z14, Z14
	VPXORD  Z15, Z15, Z15
	LEAQ    (R8)(R10*4), R11
	MOVQ    bs+72(FP), R12
	MOVQ    SI, R13

abp4:
	CMPQ             R12, $4
	JL               abp1

abp4loop:
	VMOVUPS          (R11), Z16
	VMOVUPS          (R11)(BX*1), Z17
	VMOVUPS          (R11)(BX*2), Z18
	VMOVUPS          (R11)(R9*1), Z19
	VFMADD231PS.BCST (R13), Z16, Z0
	VFMADD231PS.BCST 4(R13), Z17, Z1
	VFMADD231PS.BCST 8(R13), Z18, Z2
	VFMADD231PS.BCST 12(R13), Z19, Z3
	VFMADD231PS.BCST (R13)(AX*1), Z16, Z4
	VFMADD231PS.BCST 4(R13)(AX*1), Z17, Z5
	VFMADD231PS.BCST 8(R13)(AX*1), Z18, Z6
	VFMADD231PS.BCST 12(R13)(AX*1), Z19, Z7
	VFMADD231PS.BCST (R13)(AX*2), Z16, Z8
	VFMADD231PS.BCST 4(R13)(AX*2), Z17, Z9
	VFMADD231PS.BCST 8(R13)(AX*2), Z18, Z10
	VFMADD231PS.BCST 12(R13)(AX*2), Z19, Z11
	VFMADD231PS.BCST (R13)(R14*1), Z16, Z12
	VFMADD231PS.BCST 4(R13)(R14*1), Z17, Z13
	VFMADD231PS.BCST 8(R13)(R14*1), Z18, Z14
	VFMADD231PS.BCST 12(R13)(R14*1), Z19, Z15
	LEAQ             (R11)(BX*4), R11
	ADDQ             $16, R13
	SUBQ             $4, R12
	CMPQ             R12, $4
	JGE              abp4loop

abp1:
	TESTQ            R12, R12
	JZ               abstore
	VMOVUPS          (R11), Z16
	ADDQ             BX, R11
	VFMADD231PS.BCST (R13), Z16, Z0
	VFMADD231PS.BCST (R13)(AX*1), Z16, Z4
	VFMADD231PS.BCST (R13)(AX*2), Z16, Z8
	VFMADD231PS.BCST (R13)(R14*1), Z16, Z12
	ADDQ             $4, R13
	DECQ             R12
	JMP              abp1

abstore:
	VADDPS  Z1, Z0, Z0
	VADDPS  Z3, Z2, Z2
	VADDPS  Z2, Z0, Z0
	VADDPS  Z5, Z4, Z4
	VADDPS  Z7, Z6, Z6
	VADDPS  Z6, Z4, Z4
	VADDPS  Z9, Z8, Z8
	VADDPS  Z11, Z10, Z10
	VADDPS  Z10, Z8, Z8
	VADDPS  Z13, Z12, Z12
	VADDPS  Z15, Z14, Z14
	VADDPS  Z14, Z12, Z12
	LEAQ    (DI)(R10*4), R12
	VMOVUPS Z0, (R12)
	ADDQ    DX, R12
	VMOVUPS Z4, (R12)
	ADDQ    DX, R12
	VMOVUPS Z8, (R12)
	ADDQ    DX, R12
	VMOVUPS Z12, (R12)
	ADDQ    $16, R10
	CMPQ    R10, CX
	JLT     abcol

	// The next group of four rows, then the next block.
	DECQ grp-32(SP)
	JZ   abnextblk
	LEAQ (DI)(DX*4), DI
	LEAQ (SI)(AX*4), SI
	JMP  abgrp

abnextblk:
	MOVQ wb-24(SP), SI
	MOVQ bs+72(FP), R10
	LEAQ (SI)(R10*4), SI
	MOVQ b-8(SP), R10
	INCQ R10
	MOVQ R10, b-8(SP)
	CMPQ R10, nb+48(FP)
	JLT  abblk
	VZEROUPPER
	RET
