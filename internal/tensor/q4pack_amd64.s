//go:build amd64 && !purego

#include "textflag.h"
#include "q8pack_amd64.h"

// Packed Q4_0 kernels (AVX-512 VNNI); layout and canonical order in
// q4pack.go. They are the packed Q8_0 kernels of q8pack_amd64.s (same
// arguments, same tiles, same float steps) with the weights as nibbles:
// each zmm of weights holds the four-column steps k4 (low nibbles: AND
// 0x0F) and k4+4 (high nibbles: shifted down, AND 0x0F), unsigned 0..15,
// for VPDPBUSD against the activation bytes at 4·k4 and 16+4·k4. Each
// block's int32 sums start at −8·Σx (the second word of the xs pair, which
// holds −8·Σx for Q4_0 rather than −128·Σx), which makes them Σ x·(q−8):
// the sums of the exact Q8_0 expansion, then scaled as there. Z31 holds
// the nibble mask. The high nibbles are moved down with VPMULTISHIFTQB, not
// VPSRLW: shifts would compete with VPDPBUSD for port 0, which the tile
// kernel keeps busy.

// Q4MASK loads the nibble mask (0x0F bytes) into Z31 and the
// VPMULTISHIFTQB control that moves each byte's high nibble down (bits
// 8j+4.. of each qword for its byte j) into Z30; clobbers r.
#define Q4MASK(r) \
	MOVL         $0x0f0f0f0f, r \
	VPBROADCASTD r, Z31 \
	MOVQ         $0x3c342c241c140c04, r \
	VPBROADCASTQ r, Z30

// Q41K4 is the four-column steps k4 and k4+4 of q4pGemv4x1PF: four groups'
// weights at wo(R8..R11), the activation's bytes at xo(SI) and xo+16(SI);
// low nibbles into Z8..Z11, high nibbles into Z12..Z15 (two int32 chains
// per group, added at the end of the block).
#define Q41K4(wo, xo) \
	VPBROADCASTD xo(SI), Z20 \
	VPBROADCASTD xo+16(SI), Z21 \
	VPANDD       wo(R8), Z31, Z16 \
	VPANDD       wo(R9), Z31, Z17 \
	VPANDD       wo(R10), Z31, Z18 \
	VPANDD       wo(R11), Z31, Z19 \
	VPDPBUSD     Z20, Z16, Z8 \
	VPDPBUSD     Z20, Z17, Z9 \
	VPDPBUSD     Z20, Z18, Z10 \
	VPDPBUSD     Z20, Z19, Z11 \
	VPMULTISHIFTQB wo(R8), Z30, Z16 \
	VPMULTISHIFTQB wo(R9), Z30, Z17 \
	VPMULTISHIFTQB wo(R10), Z30, Z18 \
	VPMULTISHIFTQB wo(R11), Z30, Z19 \
	VPANDD       Z31, Z16, Z16 \
	VPANDD       Z31, Z17, Z17 \
	VPANDD       Z31, Z18, Z18 \
	VPANDD       Z31, Z19, Z19 \
	VPDPBUSD     Z21, Z16, Z12 \
	VPDPBUSD     Z21, Z17, Z13 \
	VPDPBUSD     Z21, Z18, Z14 \
	VPDPBUSD     Z21, Z19, Z15

// Q4PF prefetches a group block's four cache lines at (r)(BX*1).
#define Q4PF(r) \
	PREFETCHT0 (r)(BX*1) \
	PREFETCHT0 64(r)(BX*1) \
	PREFETCHT0 128(r)(BX*1) \
	PREFETCHT0 192(r)(BX*1)

// func q4pGemv4x1PF(out *float32, x *int8, xs *uint32, w0, w1, w2, w3, s0, s1, s2, s3 *byte, nb int, mask uint64)
// out[16·g + r] for one activation row and groups g < 4, over nb ≥ 1
// blocks; only the outputs whose bit 16·g+r of mask is set are written.
// The sums of q8pGemv4x1PF for the exact Q8_0 expansion, with its prefetch
// (into L1) 2048 bytes ahead, here eight blocks, in every group's weights
// and 256 bytes (eight blocks) ahead in its scales; in the last eight
// blocks the prefetches move on to the heads of the next four groups
// (w0..w3 + 4·nb·256 bytes). Registers: BX, AX the weight and scale
// prefetch offsets, DI the offset's step (3·nb·256) until it is taken.
TEXT ·q4pGemv4x1PF(SB), NOSPLIT, $0-104
	Q4MASK(AX)
	MOVQ   x+8(FP), SI
	MOVQ   xs+16(FP), DX
	MOVQ   w0+24(FP), R8
	MOVQ   w1+32(FP), R9
	MOVQ   w2+40(FP), R10
	MOVQ   w3+48(FP), R11
	MOVQ   s0+56(FP), R12
	MOVQ   s1+64(FP), R13
	MOVQ   s2+72(FP), R14
	MOVQ   s3+80(FP), R15
	MOVQ   nb+88(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   $2048, BX
	MOVQ   $256, AX
	IMUL3Q $768, CX, DI
	CMPQ   CX, $8
	JAE    q41loop
	ADDQ   DI, BX
	SHRQ   $3, DI
	ADDQ   DI, AX

q41loop:
	CMPQ CX, $8
	JNE  q41body
	ADDQ DI, BX
	SHRQ $3, DI
	ADDQ DI, AX

q41body:
	VPBROADCASTD 4(DX), Z8
	VPBROADCASTD 4(DX), Z9
	VPBROADCASTD 4(DX), Z10
	VPBROADCASTD 4(DX), Z11
	VPXORD      Z12, Z12, Z12
	VPXORD      Z13, Z13, Z13
	VPXORD      Z14, Z14, Z14
	VPXORD      Z15, Z15, Z15
	Q4PF(R8)
	Q41K4(0, 0)
	Q4PF(R9)
	Q41K4(64, 4)
	Q4PF(R10)
	PREFETCHT0  (R12)(AX*1)
	PREFETCHT0  (R13)(AX*1)
	Q41K4(128, 8)
	Q4PF(R11)
	PREFETCHT0  (R14)(AX*1)
	PREFETCHT0  (R15)(AX*1)
	Q41K4(192, 12)
	VCVTPH2PS   (R12), Z24
	VCVTPH2PS   (R13), Z25
	VCVTPH2PS   (R14), Z26
	VCVTPH2PS   (R15), Z27
	VPADDD      Z12, Z8, Z8
	VPADDD      Z13, Z9, Z9
	VPADDD      Z14, Z10, Z10
	VPADDD      Z15, Z11, Z11
	VCVTDQ2PS   Z8, Z8
	VCVTDQ2PS   Z9, Z9
	VCVTDQ2PS   Z10, Z10
	VCVTDQ2PS   Z11, Z11
	VMULPS.BCST (DX), Z24, Z24
	VMULPS.BCST (DX), Z25, Z25
	VMULPS.BCST (DX), Z26, Z26
	VMULPS.BCST (DX), Z27, Z27
	VFMADD231PS Z24, Z8, Z0
	VFMADD231PS Z25, Z9, Z1
	VFMADD231PS Z26, Z10, Z2
	VFMADD231PS Z27, Z11, Z3
	ADDQ        $32, SI
	ADDQ        $8, DX
	ADDQ        $256, R8
	ADDQ        $256, R9
	ADDQ        $256, R10
	ADDQ        $256, R11
	ADDQ        $32, R12
	ADDQ        $32, R13
	ADDQ        $32, R14
	ADDQ        $32, R15
	DECQ        CX
	JNZ         q41loop

	MOVQ     out+0(FP), DI
	KMOVQ    mask+96(FP), K1
	KSHIFTRQ $16, K1, K2
	KSHIFTRQ $32, K1, K3
	KSHIFTRQ $48, K1, K4
	VMOVUPS  Z0, K1, (DI)
	VMOVUPS  Z1, K2, 64(DI)
	VMOVUPS  Z2, K3, 128(DI)
	VMOVUPS  Z3, K4, 192(DI)
	VZEROUPPER
	RET

// Q34DP is one four-column step of q4pGemm3x4VNNI once the three groups'
// unsigned weights are in Z24..Z26: four activation rows' bytes at
// xo(SI), xo(SI)(AX*1), xo(SI)(AX*2), xo(R12).
#define Q34DP(xo) \
	VPBROADCASTD xo(SI), Z27 \
	VPDPBUSD     Z27, Z24, Z12 \
	VPDPBUSD     Z27, Z25, Z16 \
	VPDPBUSD     Z27, Z26, Z20 \
	VPBROADCASTD xo(SI)(AX*1), Z28 \
	VPDPBUSD     Z28, Z24, Z13 \
	VPDPBUSD     Z28, Z25, Z17 \
	VPDPBUSD     Z28, Z26, Z21 \
	VPBROADCASTD xo(SI)(AX*2), Z27 \
	VPDPBUSD     Z27, Z24, Z14 \
	VPDPBUSD     Z27, Z25, Z18 \
	VPDPBUSD     Z27, Z26, Z22 \
	VPBROADCASTD xo(R12), Z28 \
	VPDPBUSD     Z28, Z24, Z15 \
	VPDPBUSD     Z28, Z25, Z19 \
	VPDPBUSD     Z28, Z26, Z23

// Q34K4 is the steps k4 (low nibbles) and k4+4 (high nibbles) of
// q4pGemm3x4VNNI: three groups' weights at wo(R8), wo(R9), wo(R10); the
// VPMULTISHIFTQB control in Z29 (Z30 takes broadcasts here).
#define Q34K4(wo, xo) \
	VPANDD wo(R8), Z31, Z24 \
	VPANDD wo(R9), Z31, Z25 \
	VPANDD wo(R10), Z31, Z26 \
	Q34DP(xo) \
	VPMULTISHIFTQB wo(R8), Z29, Z24 \
	VPMULTISHIFTQB wo(R9), Z29, Z25 \
	VPMULTISHIFTQB wo(R10), Z29, Z26 \
	VPANDD Z31, Z24, Z24 \
	VPANDD Z31, Z25, Z25 \
	VPANDD Z31, Z26, Z26 \
	Q34DP(xo+16)

// Q34ACC adds one activation row's block to its three float accumulators:
// xd at xd, int sums i0..i2, accumulators f0..f2 (scales in Z24..Z26).
#define Q34ACC(xd, i0, i1, i2, f0, f1, f2) \
	VBROADCASTSS xd, Z27 \
	VCVTDQ2PS    i0, i0 \
	VCVTDQ2PS    i1, i1 \
	VCVTDQ2PS    i2, i2 \
	VMULPS       Z27, Z24, Z28 \
	VMULPS       Z27, Z25, Z30 \
	VFMADD231PS  Z28, i0, f0 \
	VFMADD231PS  Z30, i1, f1 \
	VMULPS       Z27, Z26, Z28 \
	VFMADD231PS  Z28, i2, f2

// func q4pGemm3x4VNNI(out *float32, ldo int, x *int8, ldx int, xs *uint32, lds int, w0, w1, w2, s0, s1, s2 *byte, nb int, mask uint64, pf *byte, pfs, pfk int)
// q8pGemm3x4VNNI (same arguments, tile, registers and prefetch streams)
// for packed Q4_0 weights: out[i·ldo + 16·g + r] for activation rows
// i < 4 and groups g < 3 over nb ≥ 1 blocks, the outputs of mask only.
TEXT ·q4pGemm3x4VNNI(SB), NOSPLIT, $24-136
	Q4MASK(AX)
	VMOVDQA64 Z30, Z29
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), AX
	LEAQ (SI)(AX*2), R12
	ADDQ AX, R12
	MOVQ xs+32(FP), DX
	MOVQ lds+40(FP), BX
	LEAQ (DX)(BX*2), R13
	ADDQ BX, R13
	MOVQ w0+48(FP), R8
	MOVQ w1+56(FP), R9
	MOVQ w2+64(FP), R10
	MOVQ s0+72(FP), R11
	MOVQ s1+80(FP), R14
	MOVQ s2+88(FP), R15
	MOVQ nb+96(FP), CX
	MOVQ pf+112(FP), DI
	G34ZERO

q34loop:
	TESTQ DI, DI
	JZ    q34nopf
	MOVQ  CX, nbleft-8(SP)
	MOVQ  AX, ldx-16(SP)
	MOVQ  BX, lds-24(SP)
	MOVQ  pfs+120(FP), AX
	MOVQ  pfk+128(FP), CX
	MOVQ  DI, BX

q34pf:
	PREFETCHT1 (BX)
	ADDQ       AX, BX
	DECQ       CX
	JNZ        q34pf
	ADDQ       $64, DI
	MOVQ       nbleft-8(SP), CX
	MOVQ       ldx-16(SP), AX
	MOVQ       lds-24(SP), BX

q34nopf:
	G34INIT
	Q34K4(0, 0)
	Q34K4(64, 4)
	Q34K4(128, 8)
	Q34K4(192, 12)
	VCVTPH2PS   (R11), Z24
	VCVTPH2PS   (R14), Z25
	VCVTPH2PS   (R15), Z26
	Q34ACC((DX), Z12, Z16, Z20, Z0, Z4, Z8)
	Q34ACC((DX)(BX*1), Z13, Z17, Z21, Z1, Z5, Z9)
	Q34ACC((DX)(BX*2), Z14, Z18, Z22, Z2, Z6, Z10)
	Q34ACC((R13), Z15, Z19, Z23, Z3, Z7, Z11)
	ADDQ        $32, SI
	ADDQ        $32, R12
	ADDQ        $8, DX
	ADDQ        $8, R13
	ADDQ        $256, R8
	ADDQ        $256, R9
	ADDQ        $256, R10
	ADDQ        $32, R11
	ADDQ        $32, R14
	ADDQ        $32, R15
	DECQ        CX
	JNZ         q34loop

	G34STORE
	VZEROUPPER
	RET

// Q81LO and Q81HI put the low or high nibbles of eight groups' weights
// at wo(R8), wo(R8)(BX*1), ... (BX: a group's weight bytes) in Z16..Z23;
// Q81DP adds their products with the activation bytes broadcast in xb to
// the int32 sums Z8..Z15.
#define Q81LO(wo) \
	VPANDD wo(R8), Z31, Z16 \
	VPANDD wo(R8)(BX*1), Z31, Z17 \
	VPANDD wo(R8)(BX*2), Z31, Z18 \
	VPANDD wo(R9), Z31, Z19 \
	VPANDD wo(R9)(BX*1), Z31, Z20 \
	VPANDD wo(R9)(BX*2), Z31, Z21 \
	VPANDD wo(R10), Z31, Z22 \
	VPANDD wo(R10)(BX*1), Z31, Z23

#define Q81HI(wo) \
	VPMULTISHIFTQB wo(R8), Z30, Z16 \
	VPMULTISHIFTQB wo(R8)(BX*1), Z30, Z17 \
	VPMULTISHIFTQB wo(R8)(BX*2), Z30, Z18 \
	VPMULTISHIFTQB wo(R9), Z30, Z19 \
	VPMULTISHIFTQB wo(R9)(BX*1), Z30, Z20 \
	VPMULTISHIFTQB wo(R9)(BX*2), Z30, Z21 \
	VPMULTISHIFTQB wo(R10), Z30, Z22 \
	VPMULTISHIFTQB wo(R10)(BX*1), Z30, Z23 \
	VPANDD Z31, Z16, Z16 \
	VPANDD Z31, Z17, Z17 \
	VPANDD Z31, Z18, Z18 \
	VPANDD Z31, Z19, Z19 \
	VPANDD Z31, Z20, Z20 \
	VPANDD Z31, Z21, Z21 \
	VPANDD Z31, Z22, Z22 \
	VPANDD Z31, Z23, Z23

#define Q81DP(xb) \
	VPDPBUSD xb, Z16, Z8 \
	VPDPBUSD xb, Z17, Z9 \
	VPDPBUSD xb, Z18, Z10 \
	VPDPBUSD xb, Z19, Z11 \
	VPDPBUSD xb, Z20, Z12 \
	VPDPBUSD xb, Z21, Z13 \
	VPDPBUSD xb, Z22, Z14 \
	VPDPBUSD xb, Z23, Z15

// Q81K4 is the steps k4 and k4+4 of q4pGemv8x1PF: eight groups' weights at
// wo(R8), wo(R8)(BX*1), ... (BX: a group's weight bytes), the activation's
// bytes at xo(SI) and xo+16(SI).
#define Q81K4(wo, xo) \
	VPBROADCASTD xo(SI), Z24 \
	VPBROADCASTD xo+16(SI), Z25 \
	Q81LO(wo) \
	Q81DP(Z24) \
	Q81HI(wo) \
	Q81DP(Z25)

// Q81PF prefetches a group block's four cache lines at (b)(BX*k)
// (Q81PF0: at (b)).
#define Q81PF(b, k) \
	PREFETCHT0 (b)(BX*k) \
	PREFETCHT0 64(b)(BX*k) \
	PREFETCHT0 128(b)(BX*k) \
	PREFETCHT0 192(b)(BX*k)

#define Q81PF0(b) \
	PREFETCHT0 (b) \
	PREFETCHT0 64(b) \
	PREFETCHT0 128(b) \
	PREFETCHT0 192(b)

// func q4pGemv8x1PF(out *float32, x *int8, xs *uint32, w, s *byte, nb int)
// q8pGemv8x1PF for packed Q4_0 weights: out[16·g + r] for one activation
// row and the eight consecutive groups g < 8 at w (scales at s), over
// nb ≥ 1 blocks, all 128 outputs written; each group's weights are
// prefetched 2048 bytes (eight blocks) ahead, in the last eight blocks the
// heads of the next eight groups. Registers as in q8pGemv8x1PF; Z25 the
// broadcast high-nibble activation bytes, Z31 the nibble mask.
TEXT ·q4pGemv8x1PF(SB), NOSPLIT, $0-48
	Q4MASK(AX)
	MOVQ   x+8(FP), SI
	MOVQ   xs+16(FP), DX
	MOVQ   w+24(FP), R8
	MOVQ   s+32(FP), R11
	MOVQ   nb+40(FP), CX
	MOVQ   CX, BX
	SHLQ   $8, BX                // nb·256
	MOVQ   CX, AX
	SHLQ   $5, AX                // nb·32
	LEAQ   (R8)(BX*2), R9
	ADDQ   BX, R9
	LEAQ   (R9)(BX*2), R10
	ADDQ   BX, R10
	LEAQ   (R11)(AX*2), R12
	ADDQ   AX, R12
	LEAQ   (R12)(AX*2), R13
	ADDQ   AX, R13
	LEAQ   2048(R8), DI
	LEAQ   2048(R9), R14
	LEAQ   2048(R10), R15
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	CMPQ   CX, $8
	JAE    q81loop
	JMP    q81wrap

q81loop:
	CMPQ CX, $8
	JNE  q81body

q81wrap:
	// The prefetch pointers move on by 7 groups: to the next eight
	// groups' heads.
	SHLQ $3, BX
	ADDQ BX, DI
	ADDQ BX, R14
	ADDQ BX, R15
	SHRQ $3, BX
	SUBQ BX, DI
	SUBQ BX, R14
	SUBQ BX, R15

q81body:
	VPBROADCASTD 4(DX), Z8
	VPBROADCASTD 4(DX), Z9
	VPBROADCASTD 4(DX), Z10
	VPBROADCASTD 4(DX), Z11
	VPBROADCASTD 4(DX), Z12
	VPBROADCASTD 4(DX), Z13
	VPBROADCASTD 4(DX), Z14
	VPBROADCASTD 4(DX), Z15
	Q81PF0(DI)
	Q81PF(DI, 1)
	Q81K4(0, 0)
	Q81PF(DI, 2)
	Q81PF0(R14)
	Q81K4(64, 4)
	Q81PF(R14, 1)
	Q81PF(R14, 2)
	PREFETCHT0 256(R11)
	PREFETCHT0 256(R11)(AX*1)
	PREFETCHT0 256(R11)(AX*2)
	PREFETCHT0 256(R12)
	Q81K4(128, 8)
	Q81PF0(R15)
	Q81PF(R15, 1)
	PREFETCHT0 256(R12)(AX*1)
	PREFETCHT0 256(R12)(AX*2)
	PREFETCHT0 256(R13)
	PREFETCHT0 256(R13)(AX*1)
	Q81K4(192, 12)
	G81ACC
	ADDQ        $32, SI
	ADDQ        $8, DX
	ADDQ        $256, R8
	ADDQ        $256, R9
	ADDQ        $256, R10
	ADDQ        $32, R11
	ADDQ        $32, R12
	ADDQ        $32, R13
	ADDQ        $256, DI
	ADDQ        $256, R14
	ADDQ        $256, R15
	DECQ        CX
	JNZ         q81loop

	G81STORE
	VZEROUPPER
	RET

// func q4pUnpack(dst, src *byte, nblk int)
// Rewrites nblk ≥ 1 consecutive packed Q4_0 group blocks at src (256 bytes
// each) in the packed Q8_0 layout at dst (512 bytes each) with the nibbles
// as unsigned bytes 0..15: the weights of the Q8_0 tile kernel, which run
// with the Q4_0 scale pairs (−8·Σx) to the same sums.
TEXT ·q4pUnpack(SB), NOSPLIT, $0-24
	Q4MASK(AX)
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nblk+16(FP), CX

q4uloop:
	VMOVDQU64      (SI), Z0
	VMOVDQU64      64(SI), Z1
	VMOVDQU64      128(SI), Z2
	VMOVDQU64      192(SI), Z3
	VPANDD         Z0, Z31, Z4
	VPANDD         Z1, Z31, Z5
	VPANDD         Z2, Z31, Z6
	VPANDD         Z3, Z31, Z7
	VPMULTISHIFTQB Z0, Z30, Z8
	VPMULTISHIFTQB Z1, Z30, Z9
	VPMULTISHIFTQB Z2, Z30, Z10
	VPMULTISHIFTQB Z3, Z30, Z11
	VPANDD         Z8, Z31, Z8
	VPANDD         Z9, Z31, Z9
	VPANDD         Z10, Z31, Z10
	VPANDD         Z11, Z31, Z11
	VMOVDQU64      Z4, (DI)
	VMOVDQU64      Z5, 64(DI)
	VMOVDQU64      Z6, 128(DI)
	VMOVDQU64      Z7, 192(DI)
	VMOVDQU64      Z8, 256(DI)
	VMOVDQU64      Z9, 320(DI)
	VMOVDQU64      Z10, 384(DI)
	VMOVDQU64      Z11, 448(DI)
	ADDQ           $256, SI
	ADDQ           $512, DI
	DECQ           CX
	JNZ            q4uloop
	VZEROUPPER
	RET
