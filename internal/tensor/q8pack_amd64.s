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
