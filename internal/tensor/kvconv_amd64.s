//go:build amd64 && !purego

#include "textflag.h"

// F16C conversions of the KV cache (kvcodec.go): eight values a step, n a
// multiple of 8. VCVTPS2PH's immediate 0 rounds to nearest even, whatever
// MXCSR says.

// func f32ToF16F16C(dst *byte, src *float32, n int)
TEXT ·f32ToF16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX

enc:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       enc
	VZEROUPPER
	RET

// func f16ToF32F16C(dst *float32, src *byte, n int)
TEXT ·f16ToF32F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX

dec:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       dec
	VZEROUPPER
	RET

// func q8ToF32AVX2(dst *float32, src *byte, nb int)
// Q8_0 blocks to float32: d·float32(q), one rounding (DequantizeQ8_0's
// bits); nb ≥ 1 blocks of 34 bytes.
TEXT ·q8ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX

q8blk:
	MOVWLZX      (SI), AX
	VMOVD        AX, X0
	VCVTPH2PS    X0, X0
	VBROADCASTSS X0, Y0
	VPMOVSXBD    2(SI), Y1
	VPMOVSXBD    10(SI), Y2
	VPMOVSXBD    18(SI), Y3
	VPMOVSXBD    26(SI), Y4
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       Y0, Y1, Y1
	VMULPS       Y0, Y2, Y2
	VMULPS       Y0, Y3, Y3
	VMULPS       Y0, Y4, Y4
	VMOVUPS      Y1, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q8blk
	VZEROUPPER
	RET

// func f16RowsF16C(dst *float32, src *byte, n, rows, stride int)
// rows rows of n half-precision values (n a multiple of 8), row r at
// src + r·stride bytes, to consecutive float32 rows of n at dst.
TEXT ·f16RowsF16C(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), BX
	MOVQ rows+24(FP), DX
	MOVQ stride+32(FP), R8
	SHRQ $3, BX

f16row:
	MOVQ SI, R9
	MOVQ BX, CX

f16val:
	VCVTPH2PS (R9), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, R9
	ADDQ      $32, DI
	DECQ      CX
	JNZ       f16val
	ADDQ      R8, SI
	DECQ      DX
	JNZ       f16row
	VZEROUPPER
	RET

// func q8RowsAVX2(dst *float32, src *byte, nb, rows, stride int)
// rows rows of nb Q8_0 blocks, row r at src + r·stride bytes, to
// consecutive float32 rows of 32·nb at dst (q8ToF32AVX2's bits).
TEXT ·q8RowsAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), BX
	MOVQ rows+24(FP), DX
	MOVQ stride+32(FP), R8

q8row:
	MOVQ SI, R9
	MOVQ BX, CX

q8rblk:
	MOVWLZX      (R9), AX
	VMOVD        AX, X0
	VCVTPH2PS    X0, X0
	VBROADCASTSS X0, Y0
	VPMOVSXBD    2(R9), Y1
	VPMOVSXBD    10(R9), Y2
	VPMOVSXBD    18(R9), Y3
	VPMOVSXBD    26(R9), Y4
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       Y0, Y1, Y1
	VMULPS       Y0, Y2, Y2
	VMULPS       Y0, Y3, Y3
	VMULPS       Y0, Y4, Y4
	VMOVUPS      Y1, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ         $34, R9
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q8rblk
	ADDQ         R8, SI
	DECQ         DX
	JNZ          q8row
	VZEROUPPER
	RET
