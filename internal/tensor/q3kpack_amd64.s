//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q3_K (AVX-512 VNNI; layout and arithmetic in q3kpack.go): one
// group of 16 rows against one Q8_K activation row, in GGML's eight lanes.

// Q3KSTEP is half n's step j of a lane: the weights q+4 (0..7) of the 16
// rows built from its qs bytes Z16 (bits 2j, 2j+1: sa = 2j) and hmask
// bytes Z17 (bit b = 4n+j, moved to bit 2), then VPDPBUSD from the step's
// −4·Σx (xo: its first value's offset in the super-block, also its
// correction's byte offset) and the product with the int8 scale (at
// so(R10)) added to the lane's int32 sum acc. Z28 holds 0x03 bytes, Z29
// 0x04.
#define Q3KSTEP(sa, b, xo, so, acc) \
	VPSRLW        $sa, Z16, Z19 \
	VPANDD        Z28, Z19, Z19 \
	VPSRLW        $b, Z17, Z20 \
	VPSLLW        $2, Z20, Z20 \
	VPANDD        Z29, Z20, Z20 \
	VPORD         Z20, Z19, Z19 \
	VPBROADCASTD  xo(DX), Z21 \
	VPDPBUSD.BCST xo(SI), Z19, Z21 \
	VPMOVSXBD     so(R10), Z22 \
	VPMULLD       Z22, Z21, Z21 \
	VPADDD        Z21, acc, acc

// Q3KLOAD loads a lane's qs bytes of the half (at a(R8)) and its hmask
// bytes (at h(R8)), and prefetches the two lines Q3KPFD + 2a bytes on: the
// record's 16 loads (a = 0, 64, …, 960) prefetch the 2048 bytes Q3KPFD
// ahead, more than a record (1824 bytes, not a whole number of lines).
#define Q3KLOAD(a, h) \
	PREFETCHT0 Q3KPFD+2*a(R8) \
	PREFETCHT0 Q3KPFD+2*a+64(R8) \
	VMOVDQU32  a(R8), Z16 \
	VMOVDQU32  h(R8), Z17

// Q3KPFD is the prefetch distance in bytes.
#define Q3KPFD 3072

// func q3kGemv1x1(out *float32, x *int8, xd *float32, xc *int32, w *byte, nb int, mask uint64)
// out[r] for one activation row (bytes x, per super-block the scale at
// xd, per four values the correction −4·Σx at xc) and the packed group
// at w, over nb ≥ 1 super-blocks; only the outputs whose bit r of mask is
// set are written. Registers: Z0..Z7 the float lanes, Z8..Z15 the
// super-block's int32 lane sums, Z16..Z22 temporaries, Z23 d·dx, Z28,
// Z29 masks, Z31 zero; R8 the record, R10 its scales.
TEXT ·q3kGemv1x1(SB), NOSPLIT, $0-56
	MOVQ x+8(FP), SI
	MOVQ xd+16(FP), BX
	MOVQ xc+24(FP), DX
	MOVQ w+32(FP), R8
	MOVQ nb+40(FP), CX
	MOVL $0x03030303, AX
	VPBROADCASTD AX, Z28
	MOVL $0x04040404, AX
	VPBROADCASTD AX, Z29
	VPXORD Z31, Z31, Z31
	G34ZERO

q3kloop:
	KZERO
	LEAQ        1536(R8), R10
	VCVTPH2PS   1792(R8), Z23
	VMULPS.BCST (BX), Z23, Z23
	Q3KLOAD(0, 1024)
	Q3KSTEP(0, 0, 0, 0, Z8)
	Q3KSTEP(2, 1, 32, 32, Z8)
	Q3KSTEP(4, 2, 64, 64, Z8)
	Q3KSTEP(6, 3, 96, 96, Z8)
	Q3KLOAD(64, 1088)
	Q3KSTEP(0, 0, 4, 0, Z9)
	Q3KSTEP(2, 1, 36, 32, Z9)
	Q3KSTEP(4, 2, 68, 64, Z9)
	Q3KSTEP(6, 3, 100, 96, Z9)
	Q3KLOAD(128, 1152)
	Q3KSTEP(0, 0, 8, 0, Z10)
	Q3KSTEP(2, 1, 40, 32, Z10)
	Q3KSTEP(4, 2, 72, 64, Z10)
	Q3KSTEP(6, 3, 104, 96, Z10)
	Q3KLOAD(192, 1216)
	Q3KSTEP(0, 0, 12, 0, Z11)
	Q3KSTEP(2, 1, 44, 32, Z11)
	Q3KSTEP(4, 2, 76, 64, Z11)
	Q3KSTEP(6, 3, 108, 96, Z11)
	Q3KLOAD(256, 1280)
	Q3KSTEP(0, 0, 16, 16, Z12)
	Q3KSTEP(2, 1, 48, 48, Z12)
	Q3KSTEP(4, 2, 80, 80, Z12)
	Q3KSTEP(6, 3, 112, 112, Z12)
	Q3KLOAD(320, 1344)
	Q3KSTEP(0, 0, 20, 16, Z13)
	Q3KSTEP(2, 1, 52, 48, Z13)
	Q3KSTEP(4, 2, 84, 80, Z13)
	Q3KSTEP(6, 3, 116, 112, Z13)
	Q3KLOAD(384, 1408)
	Q3KSTEP(0, 0, 24, 16, Z14)
	Q3KSTEP(2, 1, 56, 48, Z14)
	Q3KSTEP(4, 2, 88, 80, Z14)
	Q3KSTEP(6, 3, 120, 112, Z14)
	Q3KLOAD(448, 1472)
	Q3KSTEP(0, 0, 28, 16, Z15)
	Q3KSTEP(2, 1, 60, 48, Z15)
	Q3KSTEP(4, 2, 92, 80, Z15)
	Q3KSTEP(6, 3, 124, 112, Z15)
	Q3KLOAD(512, 1024)
	Q3KSTEP(0, 4, 128, 128, Z8)
	Q3KSTEP(2, 5, 160, 160, Z8)
	Q3KSTEP(4, 6, 192, 192, Z8)
	Q3KSTEP(6, 7, 224, 224, Z8)
	Q3KLOAD(576, 1088)
	Q3KSTEP(0, 4, 132, 128, Z9)
	Q3KSTEP(2, 5, 164, 160, Z9)
	Q3KSTEP(4, 6, 196, 192, Z9)
	Q3KSTEP(6, 7, 228, 224, Z9)
	Q3KLOAD(640, 1152)
	Q3KSTEP(0, 4, 136, 128, Z10)
	Q3KSTEP(2, 5, 168, 160, Z10)
	Q3KSTEP(4, 6, 200, 192, Z10)
	Q3KSTEP(6, 7, 232, 224, Z10)
	Q3KLOAD(704, 1216)
	Q3KSTEP(0, 4, 140, 128, Z11)
	Q3KSTEP(2, 5, 172, 160, Z11)
	Q3KSTEP(4, 6, 204, 192, Z11)
	Q3KSTEP(6, 7, 236, 224, Z11)
	Q3KLOAD(768, 1280)
	Q3KSTEP(0, 4, 144, 144, Z12)
	Q3KSTEP(2, 5, 176, 176, Z12)
	Q3KSTEP(4, 6, 208, 208, Z12)
	Q3KSTEP(6, 7, 240, 240, Z12)
	Q3KLOAD(832, 1344)
	Q3KSTEP(0, 4, 148, 144, Z13)
	Q3KSTEP(2, 5, 180, 176, Z13)
	Q3KSTEP(4, 6, 212, 208, Z13)
	Q3KSTEP(6, 7, 244, 240, Z13)
	Q3KLOAD(896, 1408)
	Q3KSTEP(0, 4, 152, 144, Z14)
	Q3KSTEP(2, 5, 184, 176, Z14)
	Q3KSTEP(4, 6, 216, 208, Z14)
	Q3KSTEP(6, 7, 248, 240, Z14)
	Q3KLOAD(960, 1472)
	Q3KSTEP(0, 4, 156, 144, Z15)
	Q3KSTEP(2, 5, 188, 176, Z15)
	Q3KSTEP(4, 6, 220, 208, Z15)
	Q3KSTEP(6, 7, 252, 240, Z15)
	KFUSE(Z23)
	ADDQ $1824, R8
	ADDQ $256, SI
	ADDQ $256, DX
	ADDQ $4, BX
	DECQ CX
	JNZ  q3kloop

	KSTORE(Z31, 48)
