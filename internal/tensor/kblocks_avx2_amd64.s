//go:build amd64 && !purego

#include "textflag.h"

// AVX2 dot products of one GGML K-block row with one Q8_K activation row,
// in the float order of the Go code (blockmm.go), so bit for bit its
// results: the integer sums are exact, the float steps the same
// operations.

// K4SCALES decodes the 6-bit scales and mins of the Q4_K/Q5_K super-block
// at (SI) (GGML's get_scale_min_k4, as its utmp words) into 0(SP) (eight
// scale bytes) and 8(SP) (eight min bytes).
#define K4SCALES \
	MOVL  4(SI), R8 \
	MOVL  8(SI), R9 \
	MOVL  12(SI), R10 \
	MOVL  R10, R11 \
	SHRL  $4, R11 \
	ANDL  $0x0f0f0f0f, R11 \
	MOVL  R9, R12 \
	SHRL  $6, R12 \
	ANDL  $0x03030303, R12 \
	SHLL  $4, R12 \
	ORL   R12, R11 \
	MOVL  R11, 12(SP) \
	MOVL  R9, R13 \
	ANDL  $0x3f3f3f3f, R13 \
	MOVL  R13, 8(SP) \
	MOVL  R10, R12 \
	ANDL  $0x0f0f0f0f, R12 \
	MOVL  R8, R13 \
	SHRL  $6, R13 \
	ANDL  $0x03030303, R13 \
	SHLL  $4, R13 \
	ORL   R13, R12 \
	MOVL  R12, 4(SP) \
	ANDL  $0x3f3f3f3f, R8 \
	MOVL  R8, 0(SP)

// MINPAIRS leaves in Y12 the mins (8(SP)) times the sums of the pairs of
// 16-sums at (DX) (each min's 32 columns), sub-block order.
#define MINPAIRS \
	VMOVDQU   (DX), Y12 \
	VPHADDD   32(DX), Y12, Y12 \
	VPERMQ    $0xD8, Y12, Y12 \
	VPMOVZXBD 8(SP), Y13 \
	VPMULLD   Y13, Y12, Y12

// LANESUM ends a lane-order kernel (sumLanes): X0 = ((l0+l4)+(l2+l6)) +
// ((l1+l5)+(l3+l7)) + s, the lanes in Y reg l (its low half x), s in X s.
#define LANESUM(l, x, s) \
	VEXTRACTF128 $1, l, X1 \
	VADDPS    X1, x, X0 \
	VMOVHLPS  X0, X0, X1 \
	VADDPS    X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS    X1, X0, X0 \
	VADDSS    s, X0, X0

// Q4KPAIR is the exact int32 sums of pair j of a Q4_K super-block: the low
// nibbles of its 32 bytes at qo(SI) against the activation bytes at
// xo(DI), times the 16-bit scale at so(SP), plus the high nibbles against
// xo+32(DI) times the scale at so+2(SP), in eight lanes of v. Y15 holds
// 0x0F bytes.
#define Q4KPAIR(qo, xo, xo2, so, so2, v) \
	VMOVDQU      qo(SI), Y2 \
	VPAND        Y15, Y2, Y3 \
	VPSRLW       $4, Y2, Y2 \
	VPAND        Y15, Y2, Y2 \
	VPMADDUBSW   xo(DI), Y3, Y3 \
	VPMADDUBSW   xo2(DI), Y2, Y2 \
	VPBROADCASTW so(SP), Y4 \
	VPBROADCASTW so2(SP), Y5 \
	VPMADDWD     Y4, Y3, Y3 \
	VPMADDWD     Y5, Y2, Y2 \
	VPADDD       Y2, Y3, v

// FMA4 fuses four int32 sums (X10, as floats) and four min sums (X12) into
// s (X0) and m (X1), one pair after the other: s = fma(is_j, d, s),
// m = fma(ms_j, dmin, m), d in X13, dmin in X14.
#define FMA1 \
	VFMADD231SS X13, X10, X0 \
	VFMADD231SS X14, X12, X1

#define SHIFT1 \
	VPSRLDQ $4, X10, X10 \
	VPSRLDQ $4, X12, X12

// func q4kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32
// One output of a Q4_K row (nb super-blocks at blk) against one Q8_K
// activation row (bytes x, sums of 16 bsum, scales xd), in stepQ4K's
// order: per pair of sub-blocks s += float32(I)·(d·xd),
// m += float32(M)·(dmin·xd), each one fused step; the result s − m.
// Locals: 0(SP) the eight 6-bit scales, 8(SP) the eight mins (bytes),
// 16(SP) the scales as int16.
TEXT ·q4kRowAVX2(SB), NOSPLIT, $32-44
	MOVQ     blk+0(FP), SI
	MOVQ     x+8(FP), DI
	MOVQ     bsum+16(FP), DX
	MOVQ     xd+24(FP), BX
	MOVQ     nb+32(FP), CX
	MOVL     $0x0f0f0f0f, AX
	MOVQ     AX, X15
	VPBROADCASTD X15, Y15
	VXORPS   X0, X0, X0
	VXORPS   X1, X1, X1

q4kloop:
	K4SCALES
	VPMOVZXBW 0(SP), X2
	VMOVDQU   X2, 16(SP)

	Q4KPAIR(16, 0, 32, 16, 18, Y6)
	Q4KPAIR(48, 64, 96, 20, 22, Y7)
	Q4KPAIR(80, 128, 160, 24, 26, Y8)
	Q4KPAIR(112, 192, 224, 28, 30, Y9)
	// [I0, I1, I2, I3]
	VPHADDD      Y7, Y6, Y10
	VPHADDD      Y9, Y8, Y11
	VPHADDD      Y11, Y10, Y10
	VEXTRACTI128 $1, Y10, X11
	VPADDD       X11, X10, X10
	VCVTDQ2PS    X10, X10

	// [M0, M1, M2, M3]: mins times the sums of the pairs of 16-sums.
	MINPAIRS
	VPHADDD   Y12, Y12, Y12
	VPERMQ    $0x08, Y12, Y12
	VCVTDQ2PS X12, X12

	// d·xd and dmin·xd.
	MOVL      (SI), AX
	MOVQ      AX, X13
	VCVTPH2PS X13, X13
	VBROADCASTSS (BX), X14
	VMULPS    X14, X13, X13
	VMOVSHDUP X13, X14

	FMA1
	SHIFT1
	FMA1
	SHIFT1
	FMA1
	SHIFT1
	FMA1

	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $64, DX
	ADDQ $4, BX
	DECQ CX
	JNZ  q4kloop

	VSUBSS X1, X0, X0
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// Q6KCHUNK adds chunk c of a Q6_K super-block (32 weights u, 6-bit
// unsigned, at u; the activation bytes at xo(DI)) to the lane sums Y9:
// Σ sc·(u−32)·x per four columns, the group scales at so(SP) (first 16
// weights) and so+2(SP) (last 16). Y13 holds bytes 32.
#define Q6KCHUNK(u, xo, so, so2) \
	VPMADDUBSW   xo(DI), u, Y5 \
	VPMADDUBSW   xo(DI), Y13, Y6 \
	VPSUBW       Y6, Y5, Y5 \
	VPBROADCASTW so(SP), Y6 \
	VPBROADCASTW so2(SP), Y7 \
	VPBLENDD     $0xF0, Y7, Y6, Y6 \
	VPMADDWD     Y6, Y5, Y5 \
	VPADDD       Y5, Y9, Y9

// Q6KHALF is half h of a Q6_K super-block: ql at qo(SI), qo+32(SI), qh at
// ho(SI), chunks 4h..4h+3 (activation bytes from xo(DI), scales from
// so(SP)).
#define Q6KHALF(qo, qo2, ho, xo, so) \
	VMOVDQU qo(SI), Y0 \
	VMOVDQU qo2(SI), Y1 \
	VMOVDQU ho(SI), Y2 \
	VPAND   Y15, Y0, Y3 \
	VPAND   Y14, Y2, Y4 \
	VPSLLW  $4, Y4, Y4 \
	VPOR    Y4, Y3, Y3 \
	Q6KCHUNK(Y3, xo, so, so+2) \
	VPAND   Y15, Y1, Y3 \
	VPSRLW  $2, Y2, Y4 \
	VPAND   Y14, Y4, Y4 \
	VPSLLW  $4, Y4, Y4 \
	VPOR    Y4, Y3, Y3 \
	Q6KCHUNK(Y3, xo+32, so+4, so+6) \
	VPSRLW  $4, Y0, Y3 \
	VPAND   Y15, Y3, Y3 \
	VPSRLW  $4, Y2, Y4 \
	VPAND   Y14, Y4, Y4 \
	VPSLLW  $4, Y4, Y4 \
	VPOR    Y4, Y3, Y3 \
	Q6KCHUNK(Y3, xo+64, so+8, so+10) \
	VPSRLW  $4, Y1, Y3 \
	VPAND   Y15, Y3, Y3 \
	VPSRLW  $6, Y2, Y4 \
	VPAND   Y14, Y4, Y4 \
	VPSLLW  $4, Y4, Y4 \
	VPOR    Y4, Y3, Y3 \
	Q6KCHUNK(Y3, xo+96, so+12, so+14)

// func q6kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32
// One output of a Q6_K row against one Q8_K activation row, in the lane
// order of stepLanes/sumLanes (blockmm.go): per super-block the exact
// int32 lane sums (lane k: columns with c%32 in 4k..4k+3) fused into eight
// float lanes with d·xd, then ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) + 0.
// bsum is not read. Local 0(SP): the 16 group scales as int16.
TEXT ·q6kRowAVX2(SB), NOSPLIT, $32-44
	MOVQ     blk+0(FP), SI
	MOVQ     x+8(FP), DI
	MOVQ     xd+24(FP), BX
	MOVQ     nb+32(FP), CX
	MOVL     $0x0f0f0f0f, AX
	MOVQ     AX, X15
	VPBROADCASTD X15, Y15
	MOVL     $0x03030303, AX
	MOVQ     AX, X14
	VPBROADCASTD X14, Y14
	MOVL     $0x20202020, AX
	MOVQ     AX, X13
	VPBROADCASTD X13, Y13
	VXORPS   Y12, Y12, Y12

q6kloop:
	VPMOVSXBW 192(SI), Y10
	VMOVDQU   Y10, 0(SP)
	VPXOR     Y9, Y9, Y9
	Q6KHALF(0, 32, 128, 0, 0)
	Q6KHALF(64, 96, 160, 128, 16)
	VCVTDQ2PS Y9, Y9
	MOVWLZX   208(SI), AX
	MOVQ      AX, X8
	VCVTPH2PS X8, X8
	VMULSS    (BX), X8, X8
	VBROADCASTSS X8, Y8
	VFMADD231PS Y8, Y9, Y12

	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $4, BX
	DECQ CX
	JNZ  q6kloop

	VXORPS    X2, X2, X2
	LANESUM(Y12, X12, X2)
	VMOVSS    X0, ret+40(FP)
	VZEROUPPER
	RET

// Q5KPAIR adds pair j of a Q5_K super-block to the lane sums Y9: the 32
// bytes of nibbles at qo(SI), the fifth bits of the low nibbles in bit b
// and of the high ones in bit b+1 of the qh bytes (Y2), against the
// activation bytes at xo(DI) and xo+32(DI), times the sub-blocks' scales
// at so(SP) and so+2(SP). Y15 holds 0x0F bytes, Y14 0x01 bytes.
#define Q5KPAIR(qo, b, b1, xo, xo2, so, so2) \
	VMOVDQU      qo(SI), Y0 \
	VPAND        Y15, Y0, Y3 \
	VPSRLW       $b, Y2, Y4 \
	VPAND        Y14, Y4, Y4 \
	VPSLLW       $4, Y4, Y4 \
	VPOR         Y4, Y3, Y3 \
	VPMADDUBSW   xo(DI), Y3, Y3 \
	VPBROADCASTW so(SP), Y6 \
	VPMADDWD     Y6, Y3, Y3 \
	VPADDD       Y3, Y9, Y9 \
	VPSRLW       $4, Y0, Y3 \
	VPAND        Y15, Y3, Y3 \
	VPSRLW       $b1, Y2, Y4 \
	VPAND        Y14, Y4, Y4 \
	VPSLLW       $4, Y4, Y4 \
	VPOR         Y4, Y3, Y3 \
	VPMADDUBSW   xo2(DI), Y3, Y3 \
	VPBROADCASTW so2(SP), Y6 \
	VPMADDWD     Y6, Y3, Y3 \
	VPADDD       Y3, Y9, Y9

// func q5kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32
// One output of a Q5_K row against one Q8_K activation row, in stepQ5K's
// order: per super-block s += float32(−xd·dmin)·float32(M) (M the exact
// sum of mins times the 16-sums), then the lanes fused with d·xd; the
// result sumLanes. Locals as q4kRowAVX2's.
TEXT ·q5kRowAVX2(SB), NOSPLIT, $32-44
	MOVQ     blk+0(FP), SI
	MOVQ     x+8(FP), DI
	MOVQ     bsum+16(FP), DX
	MOVQ     xd+24(FP), BX
	MOVQ     nb+32(FP), CX
	MOVL     $0x0f0f0f0f, AX
	MOVQ     AX, X15
	VPBROADCASTD X15, Y15
	MOVL     $0x01010101, AX
	MOVQ     AX, X14
	VPBROADCASTD X14, Y14
	VXORPS   Y11, Y11, Y11 // lanes
	VXORPS   X10, X10, X10 // s

q5kloop:
	K4SCALES
	VPMOVZXBW 0(SP), X2
	VMOVDQU   X2, 16(SP)
	// s −= round(round(xd·dmin)·M), M = Σ min·(pair of 16-sums).
	MINPAIRS
	VEXTRACTI128 $1, Y12, X13
	VPADDD    X13, X12, X12
	VPHADDD   X12, X12, X12
	VPHADDD   X12, X12, X12
	VCVTDQ2PS X12, X12
	MOVL      (SI), AX
	MOVQ      AX, X8
	VCVTPH2PS X8, X8 // [d, dmin]
	VBROADCASTSS (BX), X7
	VMULPS    X7, X8, X8 // [d·xd, dmin·xd]
	VMOVSHDUP X8, X7
	VMULSS    X12, X7, X7
	VSUBSS    X7, X10, X10

	VMOVDQU   16(SI), Y2 // qh
	VPXOR     Y9, Y9, Y9
	Q5KPAIR(48, 0, 1, 0, 32, 16, 18)
	Q5KPAIR(80, 2, 3, 64, 96, 20, 22)
	Q5KPAIR(112, 4, 5, 128, 160, 24, 26)
	Q5KPAIR(144, 6, 7, 192, 224, 28, 30)
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS X8, Y8
	VFMADD231PS Y8, Y9, Y11

	ADDQ $176, SI
	ADDQ $256, DI
	ADDQ $64, DX
	ADDQ $4, BX
	DECQ CX
	JNZ  q5kloop

	LANESUM(Y11, X11, X10)
	VMOVSS    X0, ret+40(FP)
	VZEROUPPER
	RET

// kvaluesIQ4NL twice (one copy per 128-bit lane), for VPSHUFB.
DATA iq4nlTable<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4nlTable<>+8(SB)/8, $0x7159453526190d01
DATA iq4nlTable<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA iq4nlTable<>+24(SB)/8, $0x7159453526190d01
GLOBL iq4nlTable<>(SB), RODATA|NOPTR, $32

// IQ4SC writes sub-block ib's scale ls − 32 of an IQ4_XS super-block
// (scales_l word R9, scales_h R8) as an int16 at 2·ib(SP).
#define IQ4SC(ib) \
	MOVL  R9, AX \
	SHRL  $(4*ib), AX \
	ANDL  $15, AX \
	MOVL  R8, R10 \
	SHRL  $(2*ib), R10 \
	ANDL  $3, R10 \
	SHLL  $4, R10 \
	ORL   R10, AX \
	SUBL  $32, AX \
	MOVW  AX, (2*ib)(SP)

// IQ4CHUNK adds sub-block ib of an IQ4_XS super-block to the lane sums Y9:
// its 16 bytes of table nibbles (low: columns 0–15, high: 16–31) mapped
// through Y13, against the activation bytes (signed, so |q| against x
// with q's sign), times its scale.
#define IQ4CHUNK(ib) \
	VMOVDQU      (8+16*ib)(SI), X0 \
	VPSRLW       $4, X0, X1 \
	VPAND        X15, X0, X0 \
	VPAND        X15, X1, X1 \
	VINSERTI128  $1, X1, Y0, Y0 \
	VPSHUFB      Y0, Y13, Y0 \
	VPABSB       Y0, Y1 \
	VMOVDQU      (32*ib)(DI), Y3 \
	VPSIGNB      Y0, Y3, Y3 \
	VPMADDUBSW   Y3, Y1, Y3 \
	VPBROADCASTW (2*ib)(SP), Y6 \
	VPMADDWD     Y6, Y3, Y3 \
	VPADDD       Y3, Y9, Y9

// func iq4xsRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32
// One output of an IQ4_XS row against one Q8_K activation row, in
// stepLanes/sumLanes's order (as q6kRowAVX2). Local 0(SP): the eight
// scales as int16.
TEXT ·iq4xsRowAVX2(SB), NOSPLIT, $16-44
	MOVQ     blk+0(FP), SI
	MOVQ     x+8(FP), DI
	MOVQ     xd+24(FP), BX
	MOVQ     nb+32(FP), CX
	MOVL     $0x0f0f0f0f, AX
	MOVQ     AX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU  iq4nlTable<>(SB), Y13
	VXORPS   Y12, Y12, Y12

iq4loop:
	MOVWLZX 2(SI), R8
	MOVL    4(SI), R9
	IQ4SC(0)
	IQ4SC(1)
	IQ4SC(2)
	IQ4SC(3)
	IQ4SC(4)
	IQ4SC(5)
	IQ4SC(6)
	IQ4SC(7)
	VPXOR   Y9, Y9, Y9
	IQ4CHUNK(0)
	IQ4CHUNK(1)
	IQ4CHUNK(2)
	IQ4CHUNK(3)
	IQ4CHUNK(4)
	IQ4CHUNK(5)
	IQ4CHUNK(6)
	IQ4CHUNK(7)
	VCVTDQ2PS Y9, Y9
	MOVWLZX   (SI), AX
	MOVQ      AX, X8
	VCVTPH2PS X8, X8
	VMULSS    (BX), X8, X8
	VBROADCASTSS X8, Y8
	VFMADD231PS Y8, Y9, Y12

	ADDQ $136, SI
	ADDQ $256, DI
	ADDQ $4, BX
	DECQ CX
	JNZ  iq4loop

	VXORPS    X2, X2, X2
	LANESUM(Y12, X12, X2)
	VMOVSS    X0, ret+40(FP)
	VZEROUPPER
	RET

// K2CHUNK adds chunk c of a Q2_K/Q3_K super-block to the lane sums Y9:
// the 2-bit values (Y0 >> sh) & 3 of the half's 32 qs bytes, plus, for
// Q3_K, 4 where bit hb of the hmask bytes (Y2) is set (hb < 0: none),
// minus off·x (off: Y13 bytes 4 for Q3_K, none for Q2_K), against the
// activation bytes at xo(DI), times the groups' int16 scales at so(SP)
// and so+2(SP). Y15 holds 0x03 bytes, Y14 0x01.
#define K2CHUNK(sh, xo, so) \
	VPSRLW       $sh, Y0, Y3 \
	VPAND        Y15, Y3, Y3

#define K2HBIT(hb) \
	VPSRLW       $hb, Y2, Y4 \
	VPAND        Y14, Y4, Y4 \
	VPSLLW       $2, Y4, Y4 \
	VPOR         Y4, Y3, Y3

#define K2DOT(xo, so, off) \
	VPMADDUBSW   xo(DI), Y3, Y5 \
	off \
	VPBROADCASTW so(SP), Y6 \
	VPBROADCASTW so+2(SP), Y7 \
	VPBLENDD     $0xF0, Y7, Y6, Y6 \
	VPMADDWD     Y6, Y5, Y5 \
	VPADDD       Y5, Y9, Y9

// Q3OFF subtracts 4·x pairwise from Y5 (the weights' offset).
#define Q3OFF(xo) \
	VPMADDUBSW   xo(DI), Y13, Y6 \
	VPSUBW       Y6, Y5, Y5

#define NOOFF(xo)

#define Q3CHUNK(sh, hb, xo, so) \
	K2CHUNK(sh, xo, so) \
	K2HBIT(hb) \
	K2DOT(xo, so, Q3OFF(xo))

#define Q2CHUNK(sh, xo, so) \
	K2CHUNK(sh, xo, so) \
	K2DOT(xo, so, NOOFF(xo))

// func q3kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32
// One output of a Q3_K row against one Q8_K activation row, in the lane
// order (as q6kRowAVX2). Locals: 0(SP) the 16 decoded scales + 32 as
// bytes, 16(SP) the scales as int16.
TEXT ·q3kRowAVX2(SB), NOSPLIT, $48-44
	MOVQ     blk+0(FP), SI
	MOVQ     x+8(FP), DI
	MOVQ     xd+24(FP), BX
	MOVQ     nb+32(FP), CX
	MOVL     $0x03030303, AX
	MOVQ     AX, X15
	VPBROADCASTD X15, Y15
	MOVL     $0x01010101, AX
	MOVQ     AX, X14
	VPBROADCASTD X14, Y14
	MOVL     $0x04040404, AX
	MOVQ     AX, X13
	VPBROADCASTD X13, Y13
	MOVL     $0x00200020, AX
	MOVQ     AX, X12
	VPBROADCASTD X12, Y12 // int16 32s
	VXORPS   Y11, Y11, Y11

q3kloop:
	// The 6-bit scales (GGML's aux words), minus 32.
	MOVL  96(SI), R8
	MOVL  100(SI), R9
	MOVL  104(SI), R10
	MOVL  R8, R11
	SHRL  $4, R11
	ANDL  $0x0f0f0f0f, R11
	MOVL  R10, R12
	SHRL  $4, R12
	ANDL  $0x03030303, R12
	SHLL  $4, R12
	ORL   R12, R11
	MOVL  R11, 8(SP)
	MOVL  R9, R11
	SHRL  $4, R11
	ANDL  $0x0f0f0f0f, R11
	MOVL  R10, R12
	SHRL  $6, R12
	ANDL  $0x03030303, R12
	SHLL  $4, R12
	ORL   R12, R11
	MOVL  R11, 12(SP)
	ANDL  $0x0f0f0f0f, R8
	MOVL  R10, R12
	ANDL  $0x03030303, R12
	SHLL  $4, R12
	ORL   R12, R8
	MOVL  R8, 0(SP)
	ANDL  $0x0f0f0f0f, R9
	MOVL  R10, R12
	SHRL  $2, R12
	ANDL  $0x03030303, R12
	SHLL  $4, R12
	ORL   R12, R9
	MOVL  R9, 4(SP)
	VPMOVZXBW 0(SP), Y10
	VPSUBW    Y12, Y10, Y10
	VMOVDQU   Y10, 16(SP)

	VMOVDQU (SI), Y2 // hmask
	VPXOR   Y9, Y9, Y9
	VMOVDQU 32(SI), Y0
	Q3CHUNK(0, 0, 0, 16)
	Q3CHUNK(2, 1, 32, 20)
	Q3CHUNK(4, 2, 64, 24)
	Q3CHUNK(6, 3, 96, 28)
	VMOVDQU 64(SI), Y0
	Q3CHUNK(0, 4, 128, 32)
	Q3CHUNK(2, 5, 160, 36)
	Q3CHUNK(4, 6, 192, 40)
	Q3CHUNK(6, 7, 224, 44)
	VCVTDQ2PS Y9, Y9
	MOVWLZX   108(SI), AX
	MOVQ      AX, X8
	VCVTPH2PS X8, X8
	VMULSS    (BX), X8, X8
	VBROADCASTSS X8, Y8
	VFMADD231PS Y8, Y9, Y11

	ADDQ $110, SI
	ADDQ $256, DI
	ADDQ $4, BX
	DECQ CX
	JNZ  q3kloop

	VXORPS    X2, X2, X2
	LANESUM(Y11, X11, X2)
	VMOVSS    X0, ret+40(FP)
	VZEROUPPER
	RET

// func q2kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32
// One output of a Q2_K row against one Q8_K activation row, in stepQ2K's
// order: per super-block the min terms into the lanes (lane k: groups 2k,
// 2k+1) with −xd·dmin, then the lanes with d·xd; the result sumLanes.
// Local 0(SP): the 16 group scales as int16.
TEXT ·q2kRowAVX2(SB), NOSPLIT, $32-44
	MOVQ     blk+0(FP), SI
	MOVQ     x+8(FP), DI
	MOVQ     bsum+16(FP), DX
	MOVQ     xd+24(FP), BX
	MOVQ     nb+32(FP), CX
	MOVL     $0x03030303, AX
	MOVQ     AX, X15
	VPBROADCASTD X15, Y15
	MOVL     $0x0f0f0f0f, AX
	MOVQ     AX, X14
	VPBROADCASTD X14, Y14
	VXORPS   Y11, Y11, Y11

q2kloop:
	// d·xd (X8) and −dmin·xd (X7).
	MOVL      80(SI), AX
	MOVQ      AX, X8
	VCVTPH2PS X8, X8
	VBROADCASTSS (BX), X7
	VMULPS    X7, X8, X8
	VMOVSHDUP X8, X7
	MOVL      $0x80000000, AX
	MOVQ      AX, X6
	VXORPS    X6, X7, X7 // −(dmin·xd), as Go's −dx·dmin
	// The min terms: Σ per lane of min·16-sum over its two groups.
	VMOVDQU   (SI), X0
	VPSRLW    $4, X0, X1
	VPAND     X14, X1, X1 // mins
	VPAND     X14, X0, X0 // scales
	VPMOVZXBW X0, Y0
	VMOVDQU   Y0, 0(SP)
	VPMOVZXBD X1, Y3
	VPSRLDQ   $8, X1, X1
	VPMOVZXBD X1, Y4
	VPMULLD   (DX), Y3, Y3
	VPMULLD   32(DX), Y4, Y4
	VPHADDD   Y4, Y3, Y3
	VPERMQ    $0xD8, Y3, Y3
	VCVTDQ2PS Y3, Y3
	VBROADCASTSS X7, Y7
	VFMADD231PS Y7, Y3, Y11

	VPXOR   Y9, Y9, Y9
	VMOVDQU 16(SI), Y0
	Q2CHUNK(0, 0, 0)
	Q2CHUNK(2, 32, 4)
	Q2CHUNK(4, 64, 8)
	Q2CHUNK(6, 96, 12)
	VMOVDQU 48(SI), Y0
	Q2CHUNK(0, 128, 16)
	Q2CHUNK(2, 160, 20)
	Q2CHUNK(4, 192, 24)
	Q2CHUNK(6, 224, 28)
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS X8, Y8
	VFMADD231PS Y8, Y9, Y11

	ADDQ $84, SI
	ADDQ $256, DI
	ADDQ $64, DX
	ADDQ $4, BX
	DECQ CX
	JNZ  q2kloop

	VXORPS    X2, X2, X2
	LANESUM(Y11, X11, X2)
	VMOVSS    X0, ret+40(FP)
	VZEROUPPER
	RET

// The 32-blocks (Q4_1, Q5_0, Q5_1, IQ4_NL), in blockRows' order: per
// block s += float32(I)·(d·xd) (Q8_0 activations) or
// s += float32(I)·(d·xd) + m·xs (Q8_1), each product and sum rounded,
// I the block's exact integer dot product; the result (+0) + s.

DATA q5Spread<>+0(SB)/8, $0x0000000000000000
DATA q5Spread<>+8(SB)/8, $0x0101010101010101
DATA q5Spread<>+16(SB)/8, $0x0202020202020202
DATA q5Spread<>+24(SB)/8, $0x0303030303030303
GLOBL q5Spread<>(SB), RODATA|NOPTR, $32

DATA q5Bits<>+0(SB)/8, $0x8040201008040201
GLOBL q5Bits<>(SB), RODATA|NOPTR, $8

// NIB32 unpacks the 16 nibble bytes at qo(SI) into Y0: low nibbles are
// columns 0–15, high ones 16–31. Y15 holds 0x0F bytes.
#define NIB32(qo) \
	VMOVDQU     qo(SI), X0 \
	VPSRLW      $4, X0, X1 \
	VPAND       X15, X0, X0 \
	VPAND       X15, X1, X1 \
	VINSERTI128 $1, X1, Y0, Y0

// QH32 ors 16 into the bytes of Y0 whose bit of the 32-bit qh at ho(SI)
// is set (column j: bit j). Y14: q5Spread, Y13: q5Bits, Y12: 0x10 bytes.
#define QH32(ho) \
	VPBROADCASTD ho(SI), Y1 \
	VPSHUFB      Y14, Y1, Y1 \
	VPAND        Y13, Y1, Y1 \
	VPCMPEQB     Y13, Y1, Y1 \
	VPAND        Y12, Y1, Y1 \
	VPOR         Y1, Y0, Y0

// IDOT leaves the block's integer dot product (the int16 pairs in Y5) in
// X5 as a float; Y7 holds int16 ones.
#define IDOT \
	VPMADDWD     Y7, Y5, Y5 \
	VEXTRACTI128 $1, Y5, X6 \
	VPADDD       X6, X5, X5 \
	VPSHUFD      $0x4E, X5, X6 \
	VPADDD       X6, X5, X5 \
	VPSHUFD      $0xB1, X5, X6 \
	VPADDD       X6, X5, X5 \
	VCVTDQ2PS    X5, X5

// TAIL0 adds float32(I)·(d·xd) to s (X10), d the float16 at 0(SI).
#define TAIL0 \
	MOVWLZX   (SI), AX \
	MOVQ      AX, X8 \
	VCVTPH2PS X8, X8 \
	VMULSS    (BX), X8, X8 \
	VMULSS    X8, X5, X5 \
	VADDSS    X5, X10, X10

// TAIL1 adds float32(I)·(d·xd) + m·xs to s, m the float16 at 2(SI).
#define TAIL1 \
	MOVWLZX   (SI), AX \
	MOVQ      AX, X8 \
	VCVTPH2PS X8, X8 \
	VMULSS    (BX), X8, X8 \
	VMULSS    X8, X5, X5 \
	MOVWLZX   2(SI), AX \
	MOVQ      AX, X9 \
	VCVTPH2PS X9, X9 \
	VMULSS    (DX), X9, X9 \
	VADDSS    X9, X5, X5 \
	VADDSS    X5, X10, X10

// B32START loads the arguments and the constants (s, X10, = 0); B32END
// returns (+0) + s.
#define B32START \
	MOVQ     blk+0(FP), SI \
	MOVQ     x+8(FP), DI \
	MOVQ     xd+16(FP), BX \
	MOVQ     xs+24(FP), DX \
	MOVQ     nb+32(FP), CX \
	MOVL     $0x0f0f0f0f, AX \
	MOVQ     AX, X15 \
	VPBROADCASTD X15, Y15 \
	VMOVDQU  q5Spread<>(SB), Y14 \
	VPBROADCASTQ q5Bits<>(SB), Y13 \
	MOVL     $0x10101010, AX \
	MOVQ     AX, X12 \
	VPBROADCASTD X12, Y12 \
	VPCMPEQW Y7, Y7, Y7 \
	VPSRLW   $15, Y7, Y7 \
	VMOVDQU  iq4nlTable<>(SB), Y11 \
	VXORPS   X10, X10, X10

#define B32END \
	VXORPS    X1, X1, X1 \
	VADDSS    X10, X1, X1 \
	VMOVSS    X1, ret+40(FP) \
	VZEROUPPER \
	RET

// func q4_1RowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32
TEXT ·q4_1RowAVX2(SB), NOSPLIT, $0-44
	B32START
q41loop:
	NIB32(4)
	VPMADDUBSW (DI), Y0, Y5
	IDOT
	TAIL1
	ADDQ $20, SI
	ADDQ $32, DI
	ADDQ $4, BX
	ADDQ $4, DX
	DECQ CX
	JNZ  q41loop
	B32END

// func q5_1RowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32
TEXT ·q5_1RowAVX2(SB), NOSPLIT, $0-44
	B32START
q51loop:
	NIB32(8)
	QH32(4)
	VPMADDUBSW (DI), Y0, Y5
	IDOT
	TAIL1
	ADDQ $24, SI
	ADDQ $32, DI
	ADDQ $4, BX
	ADDQ $4, DX
	DECQ CX
	JNZ  q51loop
	B32END

// func q5_0RowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32
// (xs is not read.) The weights are u − 16: Σ u·x − 16·x pairwise.
TEXT ·q5_0RowAVX2(SB), NOSPLIT, $0-44
	B32START
q50loop:
	NIB32(6)
	QH32(2)
	VPMADDUBSW (DI), Y0, Y5
	VPMADDUBSW (DI), Y12, Y6
	VPSUBW     Y6, Y5, Y5
	IDOT
	TAIL0
	ADDQ $22, SI
	ADDQ $32, DI
	ADDQ $4, BX
	DECQ CX
	JNZ  q50loop
	B32END

// func iq4nlRowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32
// (xs is not read.) Table values, signed: |q| against x with q's sign.
TEXT ·iq4nlRowAVX2(SB), NOSPLIT, $0-44
	B32START
iq4nlloop:
	NIB32(2)
	VPSHUFB    Y0, Y11, Y0
	VPABSB     Y0, Y1
	VMOVDQU    (DI), Y3
	VPSIGNB    Y0, Y3, Y3
	VPMADDUBSW Y3, Y1, Y5
	IDOT
	TAIL0
	ADDQ $18, SI
	ADDQ $32, DI
	ADDQ $4, BX
	DECQ CX
	JNZ  iq4nlloop
	B32END
