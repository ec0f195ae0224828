//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q4_K (AVX-512 VNNI; layout and arithmetic in q4kpack.go): two
// groups of 16 rows against one Q8_K activation row.

// Q4KSTEP is step k of a sub-block pair for both groups: weights at
// wo(R8), wo(R9) (low nibbles: the pair's first sub-block, high: its
// second), the activation's bytes at xlo(SI) and xhi(SI); int32 sums a0,
// a1 (group 0: first, second sub-block) and b0, b1 (group 1). The even and
// odd steps add to separate sums (Z8..Z11, Z12..Z15), two independent
// VPDPBUSD chains, added up (exactly) in Q4KPAIR.
#define Q4KSTEP(wo, xlo, xhi, a0, a1, b0, b1) \
	VMOVDQU32     wo(R8), Z16 \
	VMOVDQU32     wo(R9), Z17 \
	VPSRLW        $4, Z16, Z18 \
	VPSRLW        $4, Z17, Z19 \
	VPANDD        Z31, Z16, Z16 \
	VPANDD        Z31, Z17, Z17 \
	VPANDD        Z31, Z18, Z18 \
	VPANDD        Z31, Z19, Z19 \
	VPDPBUSD.BCST xlo(SI), Z16, a0 \
	VPDPBUSD.BCST xhi(SI), Z18, a1 \
	VPDPBUSD.BCST xlo(SI), Z17, b0 \
	VPDPBUSD.BCST xhi(SI), Z19, b1

#define Q4KEVEN(wo, xlo, xhi) Q4KSTEP(wo, xlo, xhi, Z8, Z9, Z10, Z11)
#define Q4KODD(wo, xlo, xhi) Q4KSTEP(wo, xlo, xhi, Z12, Z13, Z14, Z15)

// Q4KPF prefetches the 512 bytes of this pair of sub-blocks Q4KPFR
// records ahead in both weight streams: from R13 (group 0: R8, or, in the
// last Q4KPFR super-blocks, R8 + 2·nb·q4kRecord, the next pair of groups'
// second group) and from R9 (group 1: past its end, the next pair's first
// group follows). So the prefetches run on into the next call's groups,
// whose first records would otherwise be demand misses. The loop head
// prefetches the rest of each record, [2048, 2368).
#define Q4KPF \
	PREFETCHT0 Q4KPFD(R13) \
	PREFETCHT0 Q4KPFD+64(R13) \
	PREFETCHT0 Q4KPFD+128(R13) \
	PREFETCHT0 Q4KPFD+192(R13) \
	PREFETCHT0 Q4KPFD+256(R13) \
	PREFETCHT0 Q4KPFD+320(R13) \
	PREFETCHT0 Q4KPFD+384(R13) \
	PREFETCHT0 Q4KPFD+448(R13) \
	PREFETCHT0 Q4KPFD(R9) \
	PREFETCHT0 Q4KPFD+64(R9) \
	PREFETCHT0 Q4KPFD+128(R9) \
	PREFETCHT0 Q4KPFD+192(R9) \
	PREFETCHT0 Q4KPFD+256(R9) \
	PREFETCHT0 Q4KPFD+320(R9) \
	PREFETCHT0 Q4KPFD+384(R9) \
	PREFETCHT0 Q4KPFD+448(R9)

// Q4KPFR is the prefetch distance in records (super-blocks), Q4KPFD in
// bytes.
#define Q4KPFR 1
#define Q4KPFD (Q4KPFR*2368)

// Q4KPAIR ends a sub-block pair for both groups: I = sc·D (the scales
// at 0(R10), 16(R10) and 0(R11), 16(R11)), M = mn·bs (the mins 128 bytes
// further, the activation's sums of 32 at 0(BX), 4(BX)), then
// s += float32(I)·(d·dx) (Z0, Z2) and m += float32(M)·(dmin·dx) (Z1, Z3),
// fused.
#define Q4KPAIR \
	VPADDD        Z12, Z8, Z8 \
	VPADDD        Z13, Z9, Z9 \
	VPADDD        Z14, Z10, Z10 \
	VPADDD        Z15, Z11, Z11 \
	VPMOVZXBD     (R10), Z20 \
	VPMOVZXBD     16(R10), Z21 \
	VPMULLD       Z20, Z8, Z8 \
	VPMULLD       Z21, Z9, Z9 \
	VPADDD        Z9, Z8, Z8 \
	VPMOVZXBD     (R11), Z20 \
	VPMOVZXBD     16(R11), Z21 \
	VPMULLD       Z20, Z10, Z10 \
	VPMULLD       Z21, Z11, Z11 \
	VPADDD        Z11, Z10, Z10 \
	VPMOVZXBD     128(R10), Z20 \
	VPMOVZXBD     144(R10), Z21 \
	VPMULLD.BCST  (BX), Z20, Z20 \
	VPMULLD.BCST  4(BX), Z21, Z21 \
	VPADDD        Z21, Z20, Z20 \
	VPMOVZXBD     128(R11), Z22 \
	VPMOVZXBD     144(R11), Z23 \
	VPMULLD.BCST  (BX), Z22, Z22 \
	VPMULLD.BCST  4(BX), Z23, Z23 \
	VPADDD        Z23, Z22, Z22 \
	VCVTDQ2PS     Z8, Z8 \
	VCVTDQ2PS     Z10, Z10 \
	VCVTDQ2PS     Z20, Z20 \
	VCVTDQ2PS     Z22, Z22 \
	VFMADD231PS   Z24, Z8, Z0 \
	VFMADD231PS   Z25, Z20, Z1 \
	VFMADD231PS   Z26, Z10, Z2 \
	VFMADD231PS   Z27, Z22, Z3

// func q4kGemv2x1(out *float32, x *int8, xd *float32, bs *int32, w0, w1 *byte, nb int, mask uint64)
// out[16·g + r] for one activation row (bytes x, per super-block the scale
// at xd and eight sums of 32 at bs) and the packed groups g < 2 at w0, w1,
// over nb ≥ 1 super-blocks; only the outputs whose bit 16·g+r of mask is
// set are written. R10, R11 point at the pair's scales, R12 counts the
// pairs, R13 is group 0's prefetch base and DI its offset to the next
// pair's group 1 (Q4KPF). Registers: Z0, Z1 (group 0) and Z2, Z3 (group 1) the s
// and m sums, Z8..Z15 int32 sums (two chains), Z16..Z23 temporaries, Z24..Z27 the d·dx
// and dmin·dx of both groups, Z31 the nibble mask.
TEXT ·q4kGemv2x1(SB), NOSPLIT, $0-64
	MOVQ x+8(FP), SI
	MOVQ xd+16(FP), DX
	MOVQ bs+24(FP), BX
	MOVQ w0+32(FP), R8
	MOVQ w1+40(FP), R9
	MOVQ nb+48(FP), CX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   CX, DI
	IMULQ  $(2*2368), DI // 2·nb·q4kRecord: from group 0 to the next pair's group 1

q4kloop:
	MOVQ        R8, R13
	CMPQ        CX, $Q4KPFR
	JGT         q4kpfbase
	ADDQ        DI, R13

q4kpfbase:
	PREFETCHT0  Q4KPFD+2048(R13)
	PREFETCHT0  Q4KPFD+2112(R13)
	PREFETCHT0  Q4KPFD+2176(R13)
	PREFETCHT0  Q4KPFD+2240(R13)
	PREFETCHT0  Q4KPFD+2304(R13)
	PREFETCHT0  Q4KPFD+2048(R9)
	PREFETCHT0  Q4KPFD+2112(R9)
	PREFETCHT0  Q4KPFD+2176(R9)
	PREFETCHT0  Q4KPFD+2240(R9)
	PREFETCHT0  Q4KPFD+2304(R9)
	VCVTPH2PS   2048(R8), Z24
	VCVTPH2PS   2080(R8), Z25
	VCVTPH2PS   2048(R9), Z26
	VCVTPH2PS   2080(R9), Z27
	VMULPS.BCST (DX), Z24, Z24
	VMULPS.BCST (DX), Z25, Z25
	VMULPS.BCST (DX), Z26, Z26
	VMULPS.BCST (DX), Z27, Z27
	LEAQ        2112(R8), R10
	LEAQ        2112(R9), R11
	MOVQ        $4, R12

q4kpair:
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	Q4KPF
	Q4KEVEN(0, 0, 32)
	Q4KODD(64, 4, 36)
	Q4KEVEN(128, 8, 40)
	Q4KODD(192, 12, 44)
	Q4KEVEN(256, 16, 48)
	Q4KODD(320, 20, 52)
	Q4KEVEN(384, 24, 56)
	Q4KODD(448, 28, 60)
	Q4KPAIR
	ADDQ $512, R8
	ADDQ $512, R9
	ADDQ $512, R13
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $64, SI
	ADDQ $8, BX
	DECQ R12
	JNZ  q4kpair

	// R8, R9 moved 2048 bytes (the nibbles) on; SI 256, BX 32.
	ADDQ $320, R8
	ADDQ $320, R9
	ADDQ $4, DX
	DECQ CX
	JNZ  q4kloop

	VSUBPS   Z1, Z0, Z0
	VSUBPS   Z3, Z2, Z2
	G2STORE(56, Z0, Z2)
