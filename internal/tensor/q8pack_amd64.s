//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q8_0 kernels (AVX-512 VNNI); layout and canonical order in
// q8pack.go. Weights are unsigned bytes w+128 (one zmm: four columns of 16
// rows), activations signed bytes, so VPDPBUSD takes the weights as its
// unsigned operand and four activation bytes broadcast as the signed one.
// Each block's int32 sums start at the activation's −128·Σx (xs pair,
// second word), which makes them exactly Σ x·w; then, per block,
// acc += float32(sum) · (dw · xd) with one FMA (dw: the 16 rows' scales,
// xd: the activation's, both float32).

// G41K4 is one four-column step of q8pGemv4x1VNNI: four groups' weights at
// wo(R8..R11), the activation's bytes at xo(SI).
#define G41K4(wo, xo) \
	VPBROADCASTD xo(SI), Z20 \
	VMOVDQU32    wo(R8), Z16 \
	VMOVDQU32    wo(R9), Z17 \
	VMOVDQU32    wo(R10), Z18 \
	VMOVDQU32    wo(R11), Z19 \
	VPDPBUSD     Z20, Z16, Z8 \
	VPDPBUSD     Z20, Z17, Z9 \
	VPDPBUSD     Z20, Z18, Z10 \
	VPDPBUSD     Z20, Z19, Z11

// func q8pGemv4x1VNNI(out *float32, x *int8, xs *uint32, w0, w1, w2, w3, s0, s1, s2, s3 *byte, nb int, mask uint64)
// out[16·g + r] for one activation row and groups g < 4, over nb blocks;
// only the outputs whose bit 16·g+r of mask is set are written. nb ≥ 1.
TEXT ·q8pGemv4x1VNNI(SB), NOSPLIT, $0-104
	MOVQ x+8(FP), SI
	MOVQ xs+16(FP), DX
	MOVQ w0+24(FP), R8
	MOVQ w1+32(FP), R9
	MOVQ w2+40(FP), R10
	MOVQ w3+48(FP), R11
	MOVQ s0+56(FP), R12
	MOVQ s1+64(FP), R13
	MOVQ s2+72(FP), R14
	MOVQ s3+80(FP), R15
	MOVQ nb+88(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

g41loop:
	VPBROADCASTD 4(DX), Z8
	VPBROADCASTD 4(DX), Z9
	VPBROADCASTD 4(DX), Z10
	VPBROADCASTD 4(DX), Z11
	G41K4(0, 0)
	G41K4(64, 4)
	G41K4(128, 8)
	G41K4(192, 12)
	G41K4(256, 16)
	G41K4(320, 20)
	G41K4(384, 24)
	G41K4(448, 28)
	VCVTPH2PS    (R12), Z24
	VCVTPH2PS    (R13), Z25
	VCVTPH2PS    (R14), Z26
	VCVTPH2PS    (R15), Z27
	VCVTDQ2PS    Z8, Z8
	VCVTDQ2PS    Z9, Z9
	VCVTDQ2PS    Z10, Z10
	VCVTDQ2PS    Z11, Z11
	VMULPS.BCST  (DX), Z24, Z24
	VMULPS.BCST  (DX), Z25, Z25
	VMULPS.BCST  (DX), Z26, Z26
	VMULPS.BCST  (DX), Z27, Z27
	VFMADD231PS  Z24, Z8, Z0
	VFMADD231PS  Z25, Z9, Z1
	VFMADD231PS  Z26, Z10, Z2
	VFMADD231PS  Z27, Z11, Z3
	ADDQ         $32, SI
	ADDQ         $8, DX
	ADDQ         $512, R8
	ADDQ         $512, R9
	ADDQ         $512, R10
	ADDQ         $512, R11
	ADDQ         $32, R12
	ADDQ         $32, R13
	ADDQ         $32, R14
	ADDQ         $32, R15
	DECQ         CX
	JNZ          g41loop

	MOVQ     out+0(FP), DI
	KMOVQ    mask+96(FP), K1
	KSHIFTRQ $16, K1, K2
	KSHIFTRQ $32, K1, K3
	KSHIFTRQ $48, K1, K4
	VMOVUPS  Z0, K1, (DI)
	VMOVUPS  Z1, K2, 64(DI)
	VMOVUPS  Z2, K3, 128(DI)
	VMOVUPS  Z3, K4, 192(DI)
	VZEROUPPER
	RET

// G34K4 is one four-column step of q8pGemm3x4VNNI: three groups' weights
// at wo(R8), wo(R9), wo(R10), four activation rows' bytes at xo(SI),
// xo(SI)(AX*1), xo(SI)(AX*2), xo(R12).
#define G34K4(wo, xo) \
	VMOVDQU32    wo(R8), Z24 \
	VMOVDQU32    wo(R9), Z25 \
	VMOVDQU32    wo(R10), Z26 \
	VPBROADCASTD xo(SI), Z27 \
	VPDPBUSD     Z27, Z24, Z12 \
	VPDPBUSD     Z27, Z25, Z16 \
	VPDPBUSD     Z27, Z26, Z20 \
	VPBROADCASTD xo(SI)(AX*1), Z28 \
	VPDPBUSD     Z28, Z24, Z13 \
	VPDPBUSD     Z28, Z25, Z17 \
	VPDPBUSD     Z28, Z26, Z21 \
	VPBROADCASTD xo(SI)(AX*2), Z29 \
	VPDPBUSD     Z29, Z24, Z14 \
	VPDPBUSD     Z29, Z25, Z18 \
	VPDPBUSD     Z29, Z26, Z22 \
	VPBROADCASTD xo(R12), Z30 \
	VPDPBUSD     Z30, Z24, Z15 \
	VPDPBUSD     Z30, Z25, Z19 \
	VPDPBUSD     Z30, Z26, Z23

// G34ACC adds one activation row's block to its three float accumulators:
// xd at xd, int sums i0..i2, accumulators f0..f2 (scales in Z24..Z26).
#define G34ACC(xd, i0, i1, i2, f0, f1, f2) \
	VBROADCASTSS xd, Z27 \
	VCVTDQ2PS    i0, i0 \
	VCVTDQ2PS    i1, i1 \
	VCVTDQ2PS    i2, i2 \
	VMULPS       Z27, Z24, Z28 \
	VMULPS       Z27, Z25, Z29 \
	VMULPS       Z27, Z26, Z30 \
	VFMADD231PS  Z28, i0, f0 \
	VFMADD231PS  Z29, i1, f1 \
	VFMADD231PS  Z30, i2, f2

// func q8pGemm3x4VNNI(out *float32, ldo int, x *int8, ldx int, xs *uint32, lds int, w0, w1, w2, s0, s1, s2 *byte, nb int, mask uint64, pf *byte, pfs, pfk int)
// out[i·ldo + 16·g + r] for activation rows i < 4 (x + i·ldx, pairs at
// xs + i·lds bytes) and groups g < 3 (weights w0..w2; scales s0..s2), over
// nb blocks; only the outputs whose bit 16·g+r of mask is set are written.
// nb ≥ 1. Registers: Z0..Z11 float sums (group-major), Z12..Z23 the
// block's int32 sums, Z24..Z26 weights (then scales), Z27..Z30 broadcast
// activation bytes (then scale products). Unless pf is nil, each block
// also prefetches (into L2: the weights of the next tiles, so that DRAM
// keeps streaming while this tile computes) one cache line from each of
// pfk ≥ 1 streams, at pf + k·pfs for k < pfk, pf advancing by a line a
// block (q8pPrefetch: why streams). CX, AX and BX wait in the frame
// meanwhile.
TEXT ·q8pGemm3x4VNNI(SB), NOSPLIT, $24-136
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), AX
	LEAQ (SI)(AX*2), R12
	ADDQ AX, R12
	MOVQ xs+32(FP), DX
	MOVQ lds+40(FP), BX
	LEAQ (DX)(BX*2), R13
	ADDQ BX, R13
	MOVQ w0+48(FP), R8
	MOVQ w1+56(FP), R9
	MOVQ w2+64(FP), R10
	MOVQ s0+72(FP), R11
	MOVQ s1+80(FP), R14
	MOVQ s2+88(FP), R15
	MOVQ nb+96(FP), CX
	MOVQ pf+112(FP), DI
	G34ZERO

g34loop:
	TESTQ DI, DI
	JZ    g34nopf
	MOVQ  CX, nbleft-8(SP)
	MOVQ  AX, ldx-16(SP)
	MOVQ  BX, lds-24(SP)
	MOVQ  pfs+120(FP), AX
	MOVQ  pfk+128(FP), CX
	MOVQ  DI, BX

g34pf:
	PREFETCHT1 (BX)
	ADDQ       AX, BX
	DECQ       CX
	JNZ        g34pf
	ADDQ       $64, DI
	MOVQ       nbleft-8(SP), CX
	MOVQ       ldx-16(SP), AX
	MOVQ       lds-24(SP), BX

g34nopf:
	G34INIT
	G34K4(0, 0)
	G34K4(64, 4)
	G34K4(128, 8)
	G34K4(192, 12)
	G34K4(256, 16)
	G34K4(320, 20)
	G34K4(384, 24)
	G34K4(448, 28)
	VCVTPH2PS (R11), Z24
	VCVTPH2PS (R14), Z25
	VCVTPH2PS (R15), Z26
	G34ACC((DX), Z12, Z16, Z20, Z0, Z4, Z8)
	G34ACC((DX)(BX*1), Z13, Z17, Z21, Z1, Z5, Z9)
	G34ACC((DX)(BX*2), Z14, Z18, Z22, Z2, Z6, Z10)
	G34ACC((R13), Z15, Z19, Z23, Z3, Z7, Z11)
	ADDQ $32, SI
	ADDQ $32, R12
	ADDQ $8, DX
	ADDQ $8, R13
	ADDQ $512, R8
	ADDQ $512, R9
	ADDQ $512, R10
	ADDQ $32, R11
	ADDQ $32, R14
	ADDQ $32, R15
	DECQ CX
	JNZ  g34loop

	G34STORE
	VZEROUPPER
	RET

// G41K4S is G41K4 with two int32 chains per group: the even four-column
// steps go to Z8..Z11, the odd ones to Z12..Z15 (added together at the end
// of the block: the same exact int32 sums, half the dependency depth).
#define G41K4S(wo, xo, a0, a1, a2, a3) \
	VPBROADCASTD xo(SI), Z20 \
	VMOVDQU32    wo(R8), Z16 \
	VMOVDQU32    wo(R9), Z17 \
	VMOVDQU32    wo(R10), Z18 \
	VMOVDQU32    wo(R11), Z19 \
	VPDPBUSD     Z20, Z16, a0 \
	VPDPBUSD     Z20, Z17, a1 \
	VPDPBUSD     Z20, Z18, a2 \
	VPDPBUSD     Z20, Z19, a3

// G41PF prefetches the two cache lines at off(r)(BX*1) and off+64(r)(BX*1).
#define G41PF(r, off) \
	PREFETCHT0 off(r)(BX*1) \
	PREFETCHT0 off+64(r)(BX*1)

// func q8pGemv4x1PF(out *float32, x *int8, xs *uint32, w0, w1, w2, w3, s0, s1, s2, s3 *byte, nb int, mask uint64)
// q8pGemv4x1VNNI (same arguments, same results bit for bit) for weights
// that stream from L3: two int32 chains per group, and software prefetch
// (into L1) of every group's weights 2048 bytes (four blocks) ahead and of
// its scales 128 bytes ahead. In the last four blocks the prefetches move
// on to the heads of the next four groups (w0..w3 + 4·nb·512 bytes: the
// next call's streams, which the groups' contiguous layout puts there), so
// that a call does not start with four cold streams. Prefetches past the
// matrix are harmless. Registers: BX, AX the weight and scale prefetch
// offsets, DI the offset's step (3·nb·512) until it is taken.
TEXT ·q8pGemv4x1PF(SB), NOSPLIT, $0-104
	MOVQ x+8(FP), SI
	MOVQ xs+16(FP), DX
	MOVQ w0+24(FP), R8
	MOVQ w1+32(FP), R9
	MOVQ w2+40(FP), R10
	MOVQ w3+48(FP), R11
	MOVQ s0+56(FP), R12
	MOVQ s1+64(FP), R13
	MOVQ s2+72(FP), R14
	MOVQ s3+80(FP), R15
	MOVQ nb+88(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   $2048, BX
	MOVQ   $128, AX
	IMUL3Q $1536, CX, DI
	CMPQ   CX, $4
	JAE    g41ploop
	ADDQ   DI, BX
	SHRQ   $4, DI
	ADDQ   DI, AX

g41ploop:
	CMPQ   CX, $4
	JNE    g41ppf
	ADDQ   DI, BX
	SHRQ   $4, DI
	ADDQ   DI, AX

g41ppf:
	VPBROADCASTD 4(DX), Z8
	VPBROADCASTD 4(DX), Z9
	VPBROADCASTD 4(DX), Z10
	VPBROADCASTD 4(DX), Z11
	VPXORD       Z12, Z12, Z12
	VPXORD       Z13, Z13, Z13
	VPXORD       Z14, Z14, Z14
	VPXORD       Z15, Z15, Z15
	G41PF(R8, 0)
	G41K4S(0, 0, Z8, Z9, Z10, Z11)
	G41PF(R8, 128)
	G41K4S(64, 4, Z12, Z13, Z14, Z15)
	G41PF(R8, 256)
	G41K4S(128, 8, Z8, Z9, Z10, Z11)
	G41PF(R8, 384)
	G41K4S(192, 12, Z12, Z13, Z14, Z15)
	G41PF(R9, 0)
	G41PF(R9, 128)
	G41K4S(256, 16, Z8, Z9, Z10, Z11)
	G41PF(R9, 256)
	G41PF(R9, 384)
	G41K4S(320, 20, Z12, Z13, Z14, Z15)
	G41PF(R10, 0)
	G41PF(R10, 128)
	G41PF(R10, 256)
	G41PF(R10, 384)
	G41K4S(384, 24, Z8, Z9, Z10, Z11)
	G41PF(R11, 0)
	G41PF(R11, 128)
	G41PF(R11, 256)
	G41PF(R11, 384)
	PREFETCHT0   (R12)(AX*1)
	PREFETCHT0   (R13)(AX*1)
	PREFETCHT0   (R14)(AX*1)
	PREFETCHT0   (R15)(AX*1)
	G41K4S(448, 28, Z12, Z13, Z14, Z15)
	VCVTPH2PS    (R12), Z24
	VCVTPH2PS    (R13), Z25
	VCVTPH2PS    (R14), Z26
	VCVTPH2PS    (R15), Z27
	VPADDD       Z12, Z8, Z8
	VPADDD       Z13, Z9, Z9
	VPADDD       Z14, Z10, Z10
	VPADDD       Z15, Z11, Z11
	VCVTDQ2PS    Z8, Z8
	VCVTDQ2PS    Z9, Z9
	VCVTDQ2PS    Z10, Z10
	VCVTDQ2PS    Z11, Z11
	VMULPS.BCST  (DX), Z24, Z24
	VMULPS.BCST  (DX), Z25, Z25
	VMULPS.BCST  (DX), Z26, Z26
	VMULPS.BCST  (DX), Z27, Z27
	VFMADD231PS  Z24, Z8, Z0
	VFMADD231PS  Z25, Z9, Z1
	VFMADD231PS  Z26, Z10, Z2
	VFMADD231PS  Z27, Z11, Z3
	ADDQ         $32, SI
	ADDQ         $8, DX
	ADDQ         $512, R8
	ADDQ         $512, R9
	ADDQ         $512, R10
	ADDQ         $512, R11
	ADDQ         $32, R12
	ADDQ         $32, R13
	ADDQ         $32, R14
	ADDQ         $32, R15
	DECQ         CX
	JNZ          g41ploop

	MOVQ     out+0(FP), DI
	KMOVQ    mask+96(FP), K1
	KSHIFTRQ $16, K1, K2
	KSHIFTRQ $32, K1, K3
	KSHIFTRQ $48, K1, K4
	VMOVUPS  Z0, K1, (DI)
	VMOVUPS  Z1, K2, 64(DI)
	VMOVUPS  Z2, K3, 128(DI)
	VMOVUPS  Z3, K4, 192(DI)
	VZEROUPPER
	RET

// G81K4 is one four-column step of q8pGemv8x1PF: eight groups' weights
// at wo(R8), wo(R8)(BX*1), ... (BX: a group's weight bytes), the
// activation's bytes at xo(SI).
#define G81K4(wo, xo) \
	VPBROADCASTD xo(SI), Z24 \
	VMOVDQU32    wo(R8), Z16 \
	VMOVDQU32    wo(R8)(BX*1), Z17 \
	VMOVDQU32    wo(R8)(BX*2), Z18 \
	VMOVDQU32    wo(R9), Z19 \
	VMOVDQU32    wo(R9)(BX*1), Z20 \
	VMOVDQU32    wo(R9)(BX*2), Z21 \
	VMOVDQU32    wo(R10), Z22 \
	VMOVDQU32    wo(R10)(BX*1), Z23 \
	VPDPBUSD     Z24, Z16, Z8 \
	VPDPBUSD     Z24, Z17, Z9 \
	VPDPBUSD     Z24, Z18, Z10 \
	VPDPBUSD     Z24, Z19, Z11 \
	VPDPBUSD     Z24, Z20, Z12 \
	VPDPBUSD     Z24, Z21, Z13 \
	VPDPBUSD     Z24, Z22, Z14 \
	VPDPBUSD     Z24, Z23, Z15

// G81PF prefetches the eight cache lines (one block) from (b)(BX*k)
// (G81PF0: from (b)).
#define G81PF(b, k) \
	PREFETCHT0 (b)(BX*k) \
	PREFETCHT0 64(b)(BX*k) \
	PREFETCHT0 128(b)(BX*k) \
	PREFETCHT0 192(b)(BX*k) \
	PREFETCHT0 256(b)(BX*k) \
	PREFETCHT0 320(b)(BX*k) \
	PREFETCHT0 384(b)(BX*k) \
	PREFETCHT0 448(b)(BX*k)

#define G81PF0(b) \
	PREFETCHT0 (b) \
	PREFETCHT0 64(b) \
	PREFETCHT0 128(b) \
	PREFETCHT0 192(b) \
	PREFETCHT0 256(b) \
	PREFETCHT0 320(b) \
	PREFETCHT0 384(b) \
	PREFETCHT0 448(b)

// func q8pGemv8x1PF(out *float32, x *int8, xs *uint32, w, s *byte, nb int)
// out[16·g + r] for one activation row and the eight consecutive groups
// g < 8 whose weights start at w and scales at s, over nb ≥ 1 blocks; all
// 128 outputs are written. The same sums as q8pGemv4x1VNNI, with the
// prefetch of q8pGemv4x1PF: each group's weights four blocks ahead, and in
// the last four blocks the heads of the next eight groups. Registers:
// Z0..Z7 float sums, Z8..Z15 the block's int32 sums, Z16..Z23 weights
// (then scales), Z24 broadcast activation bytes; R8, R9, R10 groups 0, 3
// and 6 (weights), R11..R13 (scales), BX and AX the groups' strides, DI,
// R14, R15 the prefetch pointers of groups 0, 3 and 6.
TEXT ·q8pGemv8x1PF(SB), NOSPLIT, $0-48
	MOVQ   x+8(FP), SI
	MOVQ   xs+16(FP), DX
	MOVQ   w+24(FP), R8
	MOVQ   s+32(FP), R11
	MOVQ   nb+40(FP), CX
	MOVQ   CX, BX
	SHLQ   $9, BX                // nb·512
	MOVQ   CX, AX
	SHLQ   $5, AX                // nb·32
	LEAQ   (R8)(BX*2), R9
	ADDQ   BX, R9
	LEAQ   (R9)(BX*2), R10
	ADDQ   BX, R10
	LEAQ   (R11)(AX*2), R12
	ADDQ   AX, R12
	LEAQ   (R12)(AX*2), R13
	ADDQ   AX, R13
	LEAQ   2048(R8), DI
	LEAQ   2048(R9), R14
	LEAQ   2048(R10), R15
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	CMPQ   CX, $4
	JAE    g81loop
	JMP    g81wrap

g81loop:
	CMPQ CX, $4
	JNE  g81body

g81wrap:
	// The prefetch pointers move on by 7 groups: to the next eight
	// groups' heads.
	SHLQ $3, BX
	ADDQ BX, DI
	ADDQ BX, R14
	ADDQ BX, R15
	SHRQ $3, BX
	SUBQ BX, DI
	SUBQ BX, R14
	SUBQ BX, R15

g81body:
	VPBROADCASTD 4(DX), Z8
	VPBROADCASTD 4(DX), Z9
	VPBROADCASTD 4(DX), Z10
	VPBROADCASTD 4(DX), Z11
	VPBROADCASTD 4(DX), Z12
	VPBROADCASTD 4(DX), Z13
	VPBROADCASTD 4(DX), Z14
	VPBROADCASTD 4(DX), Z15
	G81PF0(DI)
	G81K4(0, 0)
	G81PF(DI, 1)
	G81K4(64, 4)
	G81PF(DI, 2)
	G81K4(128, 8)
	G81PF0(R14)
	G81K4(192, 12)
	G81PF(R14, 1)
	G81K4(256, 16)
	G81PF(R14, 2)
	G81K4(320, 20)
	G81PF0(R15)
	PREFETCHT0 128(R11)
	PREFETCHT0 128(R11)(AX*1)
	PREFETCHT0 128(R11)(AX*2)
	PREFETCHT0 128(R12)
	G81K4(384, 24)
	G81PF(R15, 1)
	PREFETCHT0 128(R12)(AX*1)
	PREFETCHT0 128(R12)(AX*2)
	PREFETCHT0 128(R13)
	PREFETCHT0 128(R13)(AX*1)
	G81K4(448, 28)
	G81ACC
	ADDQ        $32, SI
	ADDQ        $8, DX
	ADDQ        $512, R8
	ADDQ        $512, R9
	ADDQ        $512, R10
	ADDQ        $32, R11
	ADDQ        $32, R12
	ADDQ        $32, R13
	ADDQ        $512, DI
	ADDQ        $512, R14
	ADDQ        $512, R15
	DECQ        CX
	JNZ         g81loop

	G81STORE
	VZEROUPPER
	RET

// func q8pScalesAVX512(xs *uint32, xq *int8, xd *float32, nb int)
// q8pScales for nb ≥ 1 blocks: per block, xs gets the float32 bits of xd
// and −128·Σ of the block's 32 values, summed as Σ(x+128) − 32·128 with
// VPSADBW (x+128 = x^0x80 as unsigned bytes).
TEXT ·q8pScalesAVX512(SB), NOSPLIT, $0-32
	MOVQ         xs+0(FP), DI
	MOVQ         xq+8(FP), SI
	MOVQ         xd+16(FP), DX
	MOVQ         nb+24(FP), CX
	MOVL         $0x80808080, AX
	VMOVD        AX, X1
	VPBROADCASTD X1, Y1
	VPXOR        Y2, Y2, Y2

q8psloop:
	VPXOR        (SI), Y1, Y0
	VPSADBW      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X3
	VPADDQ       X3, X0, X0
	VPSHUFD      $0x4e, X0, X3
	VPADDQ       X3, X0, X0
	VMOVD        X0, AX
	SUBL         $4096, AX
	IMUL3L       $-128, AX, AX
	MOVL         (DX), BX
	MOVL         BX, (DI)
	MOVL         AX, 4(DI)
	ADDQ         $32, SI
	ADDQ         $4, DX
	ADDQ         $8, DI
	DECQ         CX
	JNZ          q8psloop
	VZEROUPPER
	RET
