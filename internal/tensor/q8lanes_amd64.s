//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q8_0 in GGML's float order (AVX-512 VNNI; q8lanes.go): for each
// block and each four-column step k4 the exact int32 sums of 16 rows
// (VPDPBUSD of the weights w+128 with the broadcast activation bytes, from
// the step's correction −128·Σx) are converted and fused into the step's
// own accumulator, acc[k4] += float32(I_k4)·(dw·dx); the eight accumulators
// are reduced at the end as ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).

// L21K4 is step k4 for two groups: weights at wo(R8), wo(R9), the
// activation's bytes at xo(SI), the correction at co(DX), accumulators a, b.
#define L21K4(wo, xo, co, a, b) \
	VMOVDQU32        wo(R8), Z16 \
	VMOVDQU32        wo(R9), Z17 \
	VPBROADCASTD     co(DX), Z26 \
	VPBROADCASTD     co(DX), Z27 \
	VPDPBUSD.BCST    xo(SI), Z16, Z26 \
	VPDPBUSD.BCST    xo(SI), Z17, Z27 \
	VCVTDQ2PS        Z26, Z26 \
	VCVTDQ2PS        Z27, Z27 \
	VFMADD231PS      Z30, Z26, a \
	VFMADD231PS      Z31, Z27, b

// func q8lGemv2x1(out *float32, x *int8, xc *int32, xs *uint32, w0, w1, s0, s1 *byte, nb int, mask uint64)
// out[16·g + r] for one activation row (bytes x, per block the eight
// corrections at xc and the scale pair, whose first word is the float32
// scale, at xs) and the groups g < 2 (weights
// w0, w1; scales s0, s1), over nb ≥ 1 blocks; only the outputs whose bit
// 16·g+r of mask is set are written. Registers: Z0..Z7 and Z8..Z15 the
// groups' eight accumulators, Z16, Z17 weights, Z26, Z27 int32 sums,
// Z30, Z31 the groups' dw·dx.
TEXT ·q8lGemv2x1(SB), NOSPLIT, $0-80
	MOVQ x+8(FP), SI
	MOVQ xc+16(FP), DX
	MOVQ xs+24(FP), BX
	MOVQ w0+32(FP), R8
	MOVQ w1+40(FP), R9
	MOVQ s0+48(FP), R10
	MOVQ s1+56(FP), R11
	MOVQ nb+64(FP), CX
	G34ZERO
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

l21loop:
	// The weights four blocks ahead, into L1 (streams from L3 or DRAM in
	// decode; harmless past the matrix).
	PREFETCHT0  2048(R8)
	PREFETCHT0  2112(R8)
	PREFETCHT0  2176(R8)
	PREFETCHT0  2240(R8)
	PREFETCHT0  2304(R8)
	PREFETCHT0  2368(R8)
	PREFETCHT0  2432(R8)
	PREFETCHT0  2496(R8)
	PREFETCHT0  2048(R9)
	PREFETCHT0  2112(R9)
	PREFETCHT0  2176(R9)
	PREFETCHT0  2240(R9)
	PREFETCHT0  2304(R9)
	PREFETCHT0  2368(R9)
	PREFETCHT0  2432(R9)
	PREFETCHT0  2496(R9)
	VCVTPH2PS   (R10), Z30
	VCVTPH2PS   (R11), Z31
	VMULPS.BCST (BX), Z30, Z30
	VMULPS.BCST (BX), Z31, Z31
	L21K4(0, 0, 0, Z0, Z8)
	L21K4(64, 4, 4, Z1, Z9)
	L21K4(128, 8, 8, Z2, Z10)
	L21K4(192, 12, 12, Z3, Z11)
	L21K4(256, 16, 16, Z4, Z12)
	L21K4(320, 20, 20, Z5, Z13)
	L21K4(384, 24, 24, Z6, Z14)
	L21K4(448, 28, 28, Z7, Z15)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $8, BX
	ADDQ $512, R8
	ADDQ $512, R9
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ CX
	JNZ  l21loop

	// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)), both groups.
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	VADDPS Z12, Z8, Z8
	VADDPS Z13, Z9, Z9
	VADDPS Z14, Z10, Z10
	VADDPS Z15, Z11, Z11
	VADDPS Z10, Z8, Z8
	VADDPS Z11, Z9, Z9
	VADDPS Z9, Z8, Z8
	G2STORE(72, Z0, Z8)

// L13K4 is step k4 for three activation rows against one group: weights
// at wo(R8) in Z24, the rows' bytes at xo(SI), xo(SI)(BX*1), xo(SI)(BX*2),
// their corrections at co(DX), co(DX)(BX*1), co(DX)(BX*2) (the correction
// rows are as many bytes apart as the activation rows), the rows' dw·dx in
// Z28..Z30, accumulators a, b, c.
#define L13K4(wo, xo, co, a, b, c) \
	VMOVDQU32        wo(R8), Z24 \
	VPBROADCASTD     co(DX), Z25 \
	VPBROADCASTD     co(DX)(BX*1), Z26 \
	VPBROADCASTD     co(DX)(BX*2), Z27 \
	VPDPBUSD.BCST    xo(SI), Z24, Z25 \
	VPDPBUSD.BCST    xo(SI)(BX*1), Z24, Z26 \
	VPDPBUSD.BCST    xo(SI)(BX*2), Z24, Z27 \
	VCVTDQ2PS        Z25, Z25 \
	VCVTDQ2PS        Z26, Z26 \
	VCVTDQ2PS        Z27, Z27 \
	VFMADD231PS      Z28, Z25, a \
	VFMADD231PS      Z29, Z26, b \
	VFMADD231PS      Z30, Z27, c

// L8RED reduces eight lane accumulators into the first:
// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)).
#define L8RED(a0, a1, a2, a3, a4, a5, a6, a7) \
	VADDPS a4, a0, a0 \
	VADDPS a5, a1, a1 \
	VADDPS a6, a2, a2 \
	VADDPS a7, a3, a3 \
	VADDPS a2, a0, a0 \
	VADDPS a3, a1, a1 \
	VADDPS a1, a0, a0

// func q8lGemm1x3(out *float32, ldo int, x *int8, ldx int, xc *int32, xs *uint32, lds int, w, s *byte, nb int, mask uint64)
// out[i·ldo + r] for three activation rows i < 3 (bytes at x, ldx apart;
// per block their eight corrections at xc, also ldx bytes apart, and
// scale pairs at xs, lds bytes apart) and one group (weights w, scales s),
// over nb ≥ 1 blocks; only the outputs whose bit r of mask is set are
// written. The group's weights are loaded once for the three rows.
// Registers: Z0..Z7, Z8..Z15, Z16..Z23 the rows' eight accumulators, Z24
// weights, Z25..Z27 int32 sums, Z28..Z30 the rows' dw·dx, Z31 dw.
TEXT ·q8lGemm1x3(SB), NOSPLIT, $0-88
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), BX
	MOVQ xc+32(FP), DX
	MOVQ xs+40(FP), R10
	MOVQ lds+48(FP), R12
	MOVQ w+56(FP), R8
	MOVQ s+64(FP), R9
	MOVQ nb+72(FP), CX
	G34ZERO
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23

l13loop:
	VCVTPH2PS   (R9), Z31
	VMULPS.BCST (R10), Z31, Z28
	VMULPS.BCST (R10)(R12*1), Z31, Z29
	VMULPS.BCST (R10)(R12*2), Z31, Z30
	L13K4(0, 0, 0, Z0, Z8, Z16)
	L13K4(64, 4, 4, Z1, Z9, Z17)
	L13K4(128, 8, 8, Z2, Z10, Z18)
	L13K4(192, 12, 12, Z3, Z11, Z19)
	L13K4(256, 16, 16, Z4, Z12, Z20)
	L13K4(320, 20, 20, Z5, Z13, Z21)
	L13K4(384, 24, 24, Z6, Z14, Z22)
	L13K4(448, 28, 28, Z7, Z15, Z23)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $8, R10
	ADDQ $512, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  l13loop

	L8RED(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	L8RED(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	L8RED(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	MOVQ    out+0(FP), DI
	MOVQ    ldo+8(FP), AX
	SHLQ    $2, AX
	KMOVQ   mask+80(FP), K1
	VMOVUPS Z0, K1, (DI)
	VMOVUPS Z8, K1, (DI)(AX*1)
	VMOVUPS Z16, K1, (DI)(AX*2)
	VZEROUPPER
	RET
