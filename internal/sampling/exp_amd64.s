//go:build amd64 && !purego

#include "textflag.h"

// func expShiftAVX512(w, l *float32, n int, m, invT, cut float32, c *[12]float32)
// n > 0, a multiple of 16. Each step is one Go operation of expShift, in
// its order: float32 rounding after every multiply and add, never fused.
TEXT ·expShiftAVX512(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         l+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Z16
	VBROADCASTSS invT+28(FP), Z17
	VBROADCASTSS cut+32(FP), Z18
	MOVQ         c+40(FP), AX
	VBROADCASTSS 0(AX), Z19      // -87.33654
	VBROADCASTSS 4(AX), Z20      // log2(e)
	VBROADCASTSS 8(AX), Z21      // 0.5
	VBROADCASTSS 12(AX), Z22     // C1
	VBROADCASTSS 16(AX), Z23     // C2
	VBROADCASTSS 20(AX), Z24     // p0
	VBROADCASTSS 24(AX), Z25     // p1
	VBROADCASTSS 28(AX), Z26     // p2
	VBROADCASTSS 32(AX), Z27     // p3
	VBROADCASTSS 36(AX), Z28     // p4
	VBROADCASTSS 40(AX), Z29     // p5
	VBROADCASTSS 44(AX), Z30     // 1.0
	MOVL         $1, BX
	VPBROADCASTD BX, Z31         // int 1
	MOVL         $127, BX
	VPBROADCASTD BX, Z15         // int 127
	XORQ         AX, AX

loop:
	VMOVUPS    (SI)(AX*4), Z0
	VSUBPS     Z16, Z0, Z0       // v - m
	VMULPS     Z17, Z0, Z0       // x = (v-m)·invT
	VCMPPS     $0x1d, Z18, Z0, K2 // x >= cut (ordered: NaN fails)
	VCMPPS     $0x1d, Z19, Z0, K3 // x >= -87.33654
	KANDW      K3, K2, K2
	VMULPS     Z20, Z0, Z1       // x·log2(e)
	VADDPS     Z21, Z1, Z1       // fx = … + 0.5
	VCVTTPS2DQ Z1, Z2            // n = int32(fx)
	VCVTDQ2PS  Z2, Z3
	VCMPPS     $0x1e, Z1, Z3, K4 // float32(n) > fx
	VPSUBD     Z31, Z2, K4, Z2   // n--
	VCVTDQ2PS  Z2, Z3            // fn
	VMULPS     Z22, Z3, Z4
	VSUBPS     Z4, Z0, Z0        // x - fn·C1
	VMULPS     Z23, Z3, Z4
	VSUBPS     Z4, Z0, Z0        // … - fn·C2
	VMULPS     Z0, Z0, Z5        // z = x·x
	VMULPS     Z24, Z0, Z6       // p0·x
	VADDPS     Z25, Z6, Z6
	VMULPS     Z0, Z6, Z6
	VADDPS     Z26, Z6, Z6
	VMULPS     Z0, Z6, Z6
	VADDPS     Z27, Z6, Z6
	VMULPS     Z0, Z6, Z6
	VADDPS     Z28, Z6, Z6
	VMULPS     Z0, Z6, Z6
	VADDPS     Z29, Z6, Z6       // y
	VMULPS     Z5, Z6, Z6        // y·z
	VADDPS     Z0, Z6, Z6        // + x
	VADDPS     Z30, Z6, Z6       // + 1
	VPADDD     Z15, Z2, Z2
	VPSLLD     $23, Z2, Z2       // 2^n
	VMULPS     Z2, Z6, Z6
	VMOVUPS.Z  Z6, K2, Z7        // 0 where masked off
	VMOVUPS    Z7, (DI)(AX*4)
	ADDQ       $16, AX
	CMPQ       AX, CX
	JLT        loop
	VZEROUPPER
	RET

// func maxAVX512(x *float32, n int, out *[16]float32)
// out[j] = the largest non-NaN x[16i+j] (-Inf if none), n > 0 a multiple
// of 16. The running maximum is MAXPS's second source, which it returns
// when either operand is NaN: NaNs never enter it.
TEXT ·maxAVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         out+16(FP), DI
	MOVL         $0xff800000, AX // -Inf
	VPBROADCASTD AX, Z0
	VMOVAPS      Z0, Z1
	XORQ         AX, AX
	TESTQ        $16, CX
	JZ           mpair
	VMOVUPS      (SI), Z2
	VMAXPS       Z0, Z2, Z0
	MOVQ         $16, AX

mpair:
	CMPQ    AX, CX
	JGE     mdone
	VMOVUPS (SI)(AX*4), Z2
	VMOVUPS 64(SI)(AX*4), Z3
	VMAXPS  Z0, Z2, Z0
	VMAXPS  Z1, Z3, Z1
	ADDQ    $32, AX
	JMP     mpair

mdone:
	VMAXPS     Z0, Z1, Z0 // neither holds NaN
	VMOVUPS    Z0, (DI)
	VZEROUPPER
	RET
