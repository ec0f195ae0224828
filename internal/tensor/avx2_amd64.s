//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(a, b *float32, k int) float32
// k is a positive multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ k+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

dot32:
	CMPQ CX, $32
	JL   dot8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         dot32

dot8:
	CMPQ CX, $8
	JL   dotdone
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dot8

dotdone:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func axpyAVX2(y *float32, alpha float32, x *float32, k int)
// y[c] += alpha·x[c]; k is a positive multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	VBROADCASTSS alpha+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         k+24(FP), CX

axpy32:
	CMPQ CX, $32
	JL   axpy8
	VMOVUPS     (DI), Y1
	VMOVUPS     32(DI), Y2
	VMOVUPS     64(DI), Y3
	VMOVUPS     96(DI), Y4
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VFMADD231PS 64(SI), Y0, Y3
	VFMADD231PS 96(SI), Y0, Y4
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	VMOVUPS     Y3, 64(DI)
	VMOVUPS     Y4, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         axpy32

axpy8:
	CMPQ CX, $8
	JL   axpydone
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         axpy8

axpydone:
	VZEROUPPER
	RET

// REDUCE4 leaves in the low xmm of a the four horizontal sums of a, b, c, d.
#define REDUCE4(a, b, c, d, xa, xt) \
	VHADDPS      b, a, a \
	VHADDPS      d, c, c \
	VHADDPS      c, a, a \
	VEXTRACTF128 $1, a, xt \
	VADDPS       xt, xa, xa

// The F32 matmul kernels below (dot1, mv4, mv8, gemm4x3) all sum each
// output over its first k columns (k a multiple of 8) in one canonical
// order: one ymm accumulator per output, FMA in steps of 8 from column 0,
// then the tree ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) (REDUCE4, or REDUCE1
// for one output). matmul.go adds the remaining k%8 columns' sum.

// REDUCE1 leaves in xa the canonical horizontal sum of ymm a (xa its xmm).
#define REDUCE1(a, xa, xt) \
	VHADDPS      a, a, a \
	VHADDPS      a, a, a \
	VEXTRACTF128 $1, a, xt \
	VADDPS       xt, xa, xa

// func dot1AVX2(x, w *float32, k int) float32
// Σ_{c<k} x[c]·w[c] in the canonical order; k a positive multiple of 8.
TEXT ·dot1AVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), R8
	MOVQ   k+16(FP), CX
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

d1loop:
	VMOVUPS     (SI)(AX*4), Y8
	VFMADD231PS (R8)(AX*4), Y8, Y0
	ADDQ        $8, AX
	CMPQ        AX, CX
	JL          d1loop

	REDUCE1(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func mv4AVX2(out, x, w *float32, ldw, k int)
// out[j] = Σ_{c<k} x[c]·w[j·ldw+c] for j < 4 in the canonical order; k is
// a positive multiple of 8.
TEXT ·mv4AVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ ldw+24(FP), BX
	MOVQ k+32(FP), CX
	SHLQ $2, BX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

mv4loop:
	VMOVUPS     (SI)(AX*4), Y8
	VFMADD231PS (R8)(AX*4), Y8, Y0
	VFMADD231PS (R9)(AX*4), Y8, Y1
	VFMADD231PS (R10)(AX*4), Y8, Y2
	VFMADD231PS (R11)(AX*4), Y8, Y3
	ADDQ        $8, AX
	CMPQ        AX, CX
	JL          mv4loop

	REDUCE4(Y0, Y1, Y2, Y3, X0, X8)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET

// func mv8AVX2(out, x, w *float32, ldw, k int)
// out[j] = Σ_{c<k} x[c]·w[j·ldw+c] for j < 8 in the canonical order: the
// matvec kernel (eight FMA chains); k is a positive multiple of 8.
TEXT ·mv8AVX2(SB), NOSPLIT, $0-40
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ ldw+24(FP), BX
	MOVQ k+32(FP), CX
	SHLQ $2, BX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	LEAQ (R11)(BX*1), R12
	LEAQ (R12)(BX*1), R13
	LEAQ (R13)(BX*1), DI
	LEAQ (DI)(BX*1), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX

mv8loop:
	VMOVUPS     (SI)(AX*4), Y8
	VFMADD231PS (R8)(AX*4), Y8, Y0
	VFMADD231PS (R9)(AX*4), Y8, Y1
	VFMADD231PS (R10)(AX*4), Y8, Y2
	VFMADD231PS (R11)(AX*4), Y8, Y3
	VFMADD231PS (R12)(AX*4), Y8, Y4
	VFMADD231PS (R13)(AX*4), Y8, Y5
	VFMADD231PS (DI)(AX*4), Y8, Y6
	VFMADD231PS (DX)(AX*4), Y8, Y7
	ADDQ        $8, AX
	CMPQ        AX, CX
	JL          mv8loop

	MOVQ out+0(FP), DI
	REDUCE4(Y0, Y1, Y2, Y3, X0, X8)
	VMOVUPS X0, (DI)
	REDUCE4(Y4, Y5, Y6, Y7, X4, X8)
	VMOVUPS X4, 16(DI)
	VZEROUPPER
	RET

// func gemm4x3AVX2(out *float32, ldo int, x *float32, ldx int, w *float32, ldw int, k int)
// out[i·ldo+j] = Σ_{c<k} x[i·ldx+c]·w[j·ldw+c] for i < 4, j < 3 in the
// canonical order; k a positive multiple of 8.
TEXT ·gemm4x3AVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ ldo+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), BX
	MOVQ w+32(FP), R8
	MOVQ ldw+40(FP), AX
	MOVQ k+48(FP), CX
	SHLQ $2, DX
	SHLQ $2, BX
	SHLQ $2, AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (SI)(BX*1), R11
	LEAQ (R11)(BX*1), R12
	LEAQ (R12)(BX*1), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ   AX, AX

gemmloop:
	CMPQ AX, CX
	JGE  gemmdone
	VMOVUPS     (R8)(AX*4), Y12
	VMOVUPS     (R9)(AX*4), Y13
	VMOVUPS     (R10)(AX*4), Y14
	VMOVUPS     (SI)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VMOVUPS     (R11)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VMOVUPS     (R12)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VMOVUPS     (R13)(AX*4), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ        $8, AX
	JMP         gemmloop

gemmdone:
	REDUCE4(Y0, Y1, Y2, Y2, X0, X12)
	VMOVLPS    X0, (DI)
	VEXTRACTPS $2, X0, 8(DI)
	ADDQ       DX, DI
	REDUCE4(Y3, Y4, Y5, Y5, X3, X12)
	VMOVLPS    X3, (DI)
	VEXTRACTPS $2, X3, 8(DI)
	ADDQ       DX, DI
	REDUCE4(Y6, Y7, Y8, Y8, X6, X12)
	VMOVLPS    X6, (DI)
	VEXTRACTPS $2, X6, 8(DI)
	ADDQ       DX, DI
	REDUCE4(Y9, Y10, Y11, Y11, X9, X12)
	VMOVLPS    X9, (DI)
	VEXTRACTPS $2, X9, 8(DI)
	VZEROUPPER
	RET

// Q8BLOCK1 accumulates one W row's block into acc: w points at the block
// (float16 scale then 32 int8), Y12 = x, Y13 = |x|, Y14 = x scale
// broadcast, Y15 = int16 ones; t, u are scratch (xt is u's xmm).
#define Q8BLOCK1(w, acc, t, u, xu) \
	VMOVDQU      2(w), t \
	VPSIGNB      Y12, t, t \
	VPMADDUBSW   t, Y13, t \
	VPMADDWD     Y15, t, t \
	VCVTDQ2PS    t, t \
	MOVWLZX      (w), R14 \
	VMOVD        R14, xu \
	VCVTPH2PS    xu, xu \
	VBROADCASTSS xu, u \
	VMULPS       Y14, u, u \
	VFMADD231PS  u, t, acc

// func q8dot4AVX2(out *float32, xq *int8, xd *float32, w *byte, ldw, nb int)
// out[j] = Σ_b xd[b]·dw(j,b)·Σ_t xq[32b+t]·q(j,b,t) for j < 4, W row j at w+j·ldw
// in GGML Q8_0 blocks; nb ≥ 1.
TEXT ·q8dot4AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ xq+8(FP), SI
	MOVQ xd+16(FP), DX
	MOVQ w+24(FP), R8
	MOVQ ldw+32(FP), BX
	MOVQ nb+40(FP), CX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	VXORPS    Y0, Y0, Y0
	VXORPS    Y1, Y1, Y1
	VXORPS    Y2, Y2, Y2
	VXORPS    Y3, Y3, Y3
	VPCMPEQW  Y15, Y15, Y15
	VPSRLW    $15, Y15, Y15

q8loop:
	VMOVDQU      (SI), Y12
	VPABSB       Y12, Y13
	VBROADCASTSS (DX), Y14
	Q8BLOCK1(R8, Y0, Y4, Y5, X5)
	Q8BLOCK1(R9, Y1, Y6, Y7, X7)
	Q8BLOCK1(R10, Y2, Y8, Y9, X9)
	Q8BLOCK1(R11, Y3, Y10, Y11, X11)
	ADDQ         $32, SI
	ADDQ         $4, DX
	ADDQ         $34, R8
	ADDQ         $34, R9
	ADDQ         $34, R10
	ADDQ         $34, R11
	DECQ         CX
	JNZ          q8loop

	REDUCE4(Y0, Y1, Y2, Y3, X0, X8)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET
