//go:build amd64 && !purego

#include "textflag.h"

// Q8_K activation quantizer (AVX-512): quantizeQ8K (blockmm.go) for one
// block of 256 values, bit for bit.

// Q8KABSMAX folds the magnitudes (sign bits cleared, Z31) of values
// 16i..16i+15 into Z0 as unsigned integers: for finite floats of one sign
// the bits order as the values do.
#define Q8KABSMAX(o) \
	VPANDD  o(SI), Z31, Z1 \
	VPMAXUD Z1, Z0, Z0

// Q8KHSUM leaves in the low dword of X5 the sum of the 16 int32 of Z5.
#define Q8KHSUM \
	VEXTRACTI64X4 $1, Z5, Y6 \
	VPADDD        Y6, Y5, Y5 \
	VEXTRACTI128  $1, Y5, X6 \
	VPADDD        X6, X5, X5 \
	VPSHUFD       $0x4e, X5, X6 \
	VPADDD        X6, X5, X5 \
	VPSHUFD       $0xb1, X5, X6 \
	VPADDD        X6, X5, X5

// Q8KQ16 quantizes values 16i..16i+15 (at o(SI)): q = min(127,
// round-half-even(iscale·x)) as bytes at qo(DI), their sum at so(BX).
#define Q8KQ16(o, qo, so) \
	VMULPS    o(SI), Z4, Z5 \
	VCVTPS2DQ Z5, Z5 \
	VPMINSD   Z30, Z5, Z5 \
	VPMOVDB   Z5, qo(DI) \
	Q8KHSUM \
	VMOVD     X5, so(BX)

// func q8kBlockAVX512(q *int8, bsum *int32, x *float32) (d float32, ok bool)
// Quantizes the 256 values at x as quantizeQ8K: q (256 bytes), bsum (16
// sums of 16) and the scale d. ok is false, and nothing written, when the
// largest magnitude is not finite or below 2^-120 (zero included), where
// −127/m or its products leave the normal range: the caller runs
// quantizeQ8K.
TEXT ·q8kBlockAVX512(SB), NOSPLIT, $0-29
	MOVQ q+0(FP), DI
	MOVQ bsum+8(FP), BX
	MOVQ x+16(FP), SI
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	VPANDD (SI), Z31, Z0
	Q8KABSMAX(64)
	Q8KABSMAX(128)
	Q8KABSMAX(192)
	Q8KABSMAX(256)
	Q8KABSMAX(320)
	Q8KABSMAX(384)
	Q8KABSMAX(448)
	Q8KABSMAX(512)
	Q8KABSMAX(576)
	Q8KABSMAX(640)
	Q8KABSMAX(704)
	Q8KABSMAX(768)
	Q8KABSMAX(832)
	Q8KABSMAX(896)
	Q8KABSMAX(960)
	VEXTRACTI64X4 $1, Z0, Y1
	VPMAXUD       Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPMAXUD       X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPMAXUD       X1, X0, X0
	VPSHUFD       $0xb1, X0, X1
	VPMAXUD       X1, X0, X0
	VMOVD         X0, AX
	CMPL          AX, $0x03800000
	JB            q8kfallback
	CMPL          AX, $0x7f800000
	JAE           q8kfallback
	VPBROADCASTD  X0, Z2
	XORQ          CX, CX

q8kfind: // the first value of largest magnitude
	VPANDD   (SI)(CX*1), Z31, Z1
	VPCMPEQD Z2, Z1, K1
	KMOVW    K1, DX
	TESTL    DX, DX
	JNZ      q8kfound
	ADDQ     $64, CX
	JMP      q8kfind

q8kfound:
	TZCNTL       DX, DX
	LEAQ         (SI)(CX*1), R8
	VMOVSS       (R8)(DX*4), X3
	MOVL         $0xc2fe0000, AX // −127
	VMOVD        AX, X4
	VDIVSS       X3, X4, X4      // iscale = −127/m
	VBROADCASTSS X4, Z4
	MOVL         $127, AX
	VPBROADCASTD AX, Z30
	Q8KQ16(0, 0, 0)
	Q8KQ16(64, 16, 4)
	Q8KQ16(128, 32, 8)
	Q8KQ16(192, 48, 12)
	Q8KQ16(256, 64, 16)
	Q8KQ16(320, 80, 20)
	Q8KQ16(384, 96, 24)
	Q8KQ16(448, 112, 28)
	Q8KQ16(512, 128, 32)
	Q8KQ16(576, 144, 36)
	Q8KQ16(640, 160, 40)
	Q8KQ16(704, 176, 44)
	Q8KQ16(768, 192, 48)
	Q8KQ16(832, 208, 52)
	Q8KQ16(896, 224, 56)
	Q8KQ16(960, 240, 60)
	MOVL   $0x3f800000, AX // 1
	VMOVD  AX, X5
	VDIVSS X4, X5, X5
	VMOVSS X5, d+24(FP)
	MOVB   $1, ok+28(FP)
	VZEROUPPER
	RET

q8kfallback:
	MOVB $0, ok+28(FP)
	VZEROUPPER
	RET
