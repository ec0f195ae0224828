//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q5_K (AVX-512 VNNI; layout and arithmetic in q5kpack.go): one
// group of 16 rows against one Q8_K activation row, in GGML's eight lanes.

// Q5KSTEP is lane k's two steps of the current sub-block pair p: nibbles
// at wo(R8) (low: the pair's first sub-block, high: its second), the
// record's qh bytes at qo(R11) whose bits 2p, 2p+1 (X27 holds 2p) give
// the fifth bits, the activation bytes at xlo(SI), xhi(SI), the pair's
// scales in Z20, Z21: sc·Σ q·x of both steps added to the lane's int32
// sum acc.
#define Q5KSTEP(wo, qo, xlo, xhi, acc) \
	VMOVDQU32     wo(R8), Z16 \
	VMOVDQU32     qo(R11), Z17 \
	VPSRLW        X27, Z17, Z17 \
	VPSLLW        $4, Z17, Z18 \
	VPSLLW        $3, Z17, Z19 \
	VPANDD        Z29, Z18, Z18 \
	VPANDD        Z29, Z19, Z19 \
	VPANDD        Z30, Z16, Z28 \
	VPORD         Z28, Z18, Z18 \
	VPSRLW        $4, Z16, Z16 \
	VPANDD        Z30, Z16, Z16 \
	VPORD         Z16, Z19, Z19 \
	VPXORD        Z25, Z25, Z25 \
	VPXORD        Z26, Z26, Z26 \
	VPDPBUSD.BCST xlo(SI), Z18, Z25 \
	VPDPBUSD.BCST xhi(SI), Z19, Z26 \
	VPMULLD       Z20, Z25, Z25 \
	VPMULLD       Z21, Z26, Z26 \
	VPADDD        Z25, acc, acc \
	VPADDD        Z26, acc, acc

// Q5KPF4 prefetches four lines from o bytes past R8 (Q5KPFD on: each pair's
// 512 bytes of nibbles, and at the record's head its other 832 bytes).
#define Q5KPF4(o) \
	PREFETCHT0 Q5KPFD+o(R8) \
	PREFETCHT0 Q5KPFD+o+64(R8) \
	PREFETCHT0 Q5KPFD+o+128(R8) \
	PREFETCHT0 Q5KPFD+o+192(R8)

// Q5KPFD is the prefetch distance in bytes.
#define Q5KPFD 3072

// Q5KMIN adds one sub-block's mn·bs (its mins at mo(R11), the activation's
// sum of 32 at bo(BX)) to the int32 sum Z24.
#define Q5KMIN(mo, bo) \
	VPMOVZXBD    mo(R11), Z26 \
	VPMULLD.BCST bo(BX), Z26, Z26 \
	VPADDD       Z26, Z24, Z24

// func q5kGemv1x1(out *float32, x *int8, xd *float32, bs *int32, w *byte, nb int, mask uint64)
// out[r] for one activation row (bytes x, per super-block the scale at xd
// and eight sums of 32 at bs) and the packed group at w, over nb ≥ 1
// super-blocks; only the outputs whose bit r of mask is set are written.
// Registers: Z0..Z7 the float lanes, Z31 the min terms' float sum s,
// Z8..Z15 the super-block's int32 lane sums, Z22 d·dx, Z23 dmin·dx, Z24
// the mins' int32 sum, Z29 and Z30 masks; R11 the record, R8 the pair's
// nibbles, R10 its scales, R12 2p, R9 the pairs left.
TEXT ·q5kGemv1x1(SB), NOSPLIT, $0-56
	MOVQ x+8(FP), SI
	MOVQ xd+16(FP), DX
	MOVQ bs+24(FP), BX
	MOVQ w+32(FP), R8
	MOVQ nb+40(FP), CX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	MOVL $0x10101010, AX
	VPBROADCASTD AX, Z29
	G34ZERO
	VPXORD Z31, Z31, Z31

q5kloop:
	Q5KPF4(2048)
	Q5KPF4(2304)
	Q5KPF4(2560)
	PREFETCHT0  Q5KPFD+2816(R8)
	MOVQ        R8, R11
	VCVTPH2PS   2560(R11), Z22
	VMULPS.BCST (DX), Z22, Z22
	VCVTPH2PS   2592(R11), Z23
	VMULPS.BCST (DX), Z23, Z23
	KZERO
	LEAQ        2624(R11), R10
	XORQ        R12, R12
	MOVQ        $4, R9

q5kpair:
	Q5KPF4(0)
	Q5KPF4(256)
	VMOVQ     R12, X27
	VPMOVZXBD (R10), Z20
	VPMOVZXBD 16(R10), Z21
	Q5KSTEP(0, 2048, 0, 32, Z8)
	Q5KSTEP(64, 2112, 4, 36, Z9)
	Q5KSTEP(128, 2176, 8, 40, Z10)
	Q5KSTEP(192, 2240, 12, 44, Z11)
	Q5KSTEP(256, 2304, 16, 48, Z12)
	Q5KSTEP(320, 2368, 20, 52, Z13)
	Q5KSTEP(384, 2432, 24, 56, Z14)
	Q5KSTEP(448, 2496, 28, 60, Z15)
	ADDQ $512, R8
	ADDQ $32, R10
	ADDQ $64, SI
	ADDQ $2, R12
	DECQ R9
	JNZ  q5kpair

	// s += −(dmin·dx)·float32(M), the product rounded (stepQ5K).
	VPXORD Z24, Z24, Z24
	Q5KMIN(2752, 0)
	Q5KMIN(2768, 4)
	Q5KMIN(2784, 8)
	Q5KMIN(2800, 12)
	Q5KMIN(2816, 16)
	Q5KMIN(2832, 20)
	Q5KMIN(2848, 24)
	Q5KMIN(2864, 28)
	VCVTDQ2PS Z24, Z24
	VMULPS    Z23, Z24, Z24
	VSUBPS    Z24, Z31, Z31
	KFUSE(Z22)
	ADDQ $832, R8 // past qh, d, dmin, scales, mins: the next record
	ADDQ $4, DX
	ADDQ $32, BX
	DECQ CX
	JNZ  q5kloop

	KSTORE(Z31, 48)
