//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q6_K (AVX-512 VNNI; layout and arithmetic in q6kpack.go): one
// group of 16 rows against one Q8_K activation row, in GGML's eight lanes.

// Q6KQ builds step j's 6-bit weights of the 16 rows in Z19 from the
// loaded ql bytes Z16 (A) / Z17 (B) and qh bytes Z18: the nibble (low of
// A for j=0, of B for j=1, high of A for j=2, of B for j=3) or'ed with
// the qh bit pair 2j..2j+1 moved to bits 4-5. Z30 holds 0x0F, Z29 0x30.
#define Q6KQ0 \
	VPANDD Z30, Z16, Z19 \
	VPSLLW $4, Z18, Z20 \
	VPANDD Z29, Z20, Z20 \
	VPORD  Z20, Z19, Z19
#define Q6KQ1 \
	VPANDD Z30, Z17, Z19 \
	VPSLLW $2, Z18, Z20 \
	VPANDD Z29, Z20, Z20 \
	VPORD  Z20, Z19, Z19
#define Q6KQ2 \
	VPSRLW $4, Z16, Z19 \
	VPANDD Z30, Z19, Z19 \
	VPANDD Z29, Z18, Z20 \
	VPORD  Z20, Z19, Z19
#define Q6KQ3 \
	VPSRLW $4, Z17, Z19 \
	VPANDD Z30, Z19, Z19 \
	VPSRLW $2, Z18, Z20 \
	VPANDD Z29, Z20, Z20 \
	VPORD  Z20, Z19, Z19

// Q6KSTEP ends lane k's step j of the current half, its weights in Z19
// (Q6KQj; R10: the half's scales, SI: its activation bytes, DX: its
// corrections): I = sc·(Σ q·x − 32·Σx) added to the lane's int32 sum acc.
// xo = 32j+4k (the step's first value; also its correction's byte offset),
// so = 16·(2j+k/4) (its scales').
#define Q6KSTEP(xo, so, acc) \
	VPBROADCASTD   xo(DX), Z21 \
	VPDPBUSD.BCST  xo(SI), Z19, Z21 \
	VPMOVSXBD      so(R10), Z22 \
	VPMULLD        Z22, Z21, Z21 \
	VPADDD         Z21, acc, acc

// Q6KLOAD loads a lane's ql (two) and qh bytes of the current half, at
// wo(R8), wo+64(R8), wo+128(R8) (wo = 192k), and prefetches four lines
// Q6KPFD + 4wo/3 bytes on: a half's eight lanes prefetch the 2048 bytes
// Q6KPFD past it, more than its share of the record (1536 of the
// half's nibbles, then the record's 288 bytes of scales and d).
#define Q6KLOAD(a, b, c) \
	PREFETCHT0 Q6KPFD+a*4/3(R8) \
	PREFETCHT0 Q6KPFD+a*4/3+64(R8) \
	PREFETCHT0 Q6KPFD+a*4/3+128(R8) \
	PREFETCHT0 Q6KPFD+a*4/3+192(R8) \
	VMOVDQU32 a(R8), Z16 \
	VMOVDQU32 b(R8), Z17 \
	VMOVDQU32 c(R8), Z18

// Q6KPFD is the prefetch distance in bytes.
#define Q6KPFD 3072

// Q6KLANE is a lane's four steps of the current half: its bytes at a, b,
// c (Q6KLOAD), the steps' activation offsets x0..x3 and scale offsets
// s0..s3 (Q6KSTEP), its int32 sum acc.
#define Q6KLANE(a, b, c, x0, x1, x2, x3, s0, s1, s2, s3, acc) \
	Q6KLOAD(a, b, c) \
	Q6KQ0 \
	Q6KSTEP(x0, s0, acc) \
	Q6KQ1 \
	Q6KSTEP(x1, s1, acc) \
	Q6KQ2 \
	Q6KSTEP(x2, s2, acc) \
	Q6KQ3 \
	Q6KSTEP(x3, s3, acc)

// func q6kGemv1x1(out *float32, x *int8, xd *float32, xc *int32, w *byte, nb int, mask uint64)
// out[r] for one activation row (bytes x, per super-block the scale at xd,
// per four values the correction −32·Σx at xc) and the packed group at w,
// over nb ≥ 1 super-blocks; only the outputs whose bit r of mask is set
// are written. Registers: Z0..Z7 the eight float lanes, Z8..Z15 the
// super-block's int32 lane sums, Z16..Z22 temporaries, Z23 d·dx, Z29,
// Z30 masks, Z31 zero; R8 the half's records, R10 its scales, R12 the
// halves left.
TEXT ·q6kGemv1x1(SB), NOSPLIT, $0-56
	MOVQ x+8(FP), SI
	MOVQ xd+16(FP), BX
	MOVQ xc+24(FP), DX
	MOVQ w+32(FP), R8
	MOVQ nb+40(FP), CX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z30
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z29
	VPXORD Z31, Z31, Z31
	G34ZERO

q6kloop:
	KZERO
	LEAQ   3072(R8), R10
	VCVTPH2PS   3328(R8), Z23
	VMULPS.BCST (BX), Z23, Z23
	MOVQ   $2, R12

q6khalf:
	Q6KLANE(0, 64, 128, 0, 32, 64, 96, 0, 32, 64, 96, Z8)
	Q6KLANE(192, 256, 320, 4, 36, 68, 100, 0, 32, 64, 96, Z9)
	Q6KLANE(384, 448, 512, 8, 40, 72, 104, 0, 32, 64, 96, Z10)
	Q6KLANE(576, 640, 704, 12, 44, 76, 108, 0, 32, 64, 96, Z11)
	Q6KLANE(768, 832, 896, 16, 48, 80, 112, 16, 48, 80, 112, Z12)
	Q6KLANE(960, 1024, 1088, 20, 52, 84, 116, 16, 48, 80, 112, Z13)
	Q6KLANE(1152, 1216, 1280, 24, 56, 88, 120, 16, 48, 80, 112, Z14)
	Q6KLANE(1344, 1408, 1472, 28, 60, 92, 124, 16, 48, 80, 112, Z15)
	ADDQ $1536, R8
	ADDQ $128, R10
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ R12
	JNZ  q6khalf

	KFUSE(Z23)
	ADDQ $288, R8 // past the scales and d: the next record
	ADDQ $4, BX
	DECQ CX
	JNZ  q6kloop

	KSTORE(Z31, 48)
