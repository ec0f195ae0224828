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
