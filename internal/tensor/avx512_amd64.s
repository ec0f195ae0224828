//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 F32 kernels take any k ≥ 0: the last k%16 columns are read
// with a zero-masking load (masked-off lanes never fault).

// TAILMASK takes k in CX, sets K1 to the low k%16 bits and leaves k
// rounded down to a multiple of 16 in CX; it clobbers AX and t.
#define TAILMASK(t) \
	MOVQ  CX, AX \
	ANDQ  $-16, AX \
	ANDQ  $15, CX \
	MOVL  $1, t \
	SHLL  CX, t \
	DECL  t \
	KMOVW t, K1 \
	MOVQ  AX, CX

// FOLD adds the high half of z into its low ymm y.
#define FOLD(z, y) \
	VEXTRACTF64X4 $1, z, Y31 \
	VADDPS        Y31, y, y

// HSUM4 leaves in xa (the xmm of a) the horizontal sums of ymm a, b, c, d.
#define HSUM4(a, b, c, d, xa) \
	VHADDPS       b, a, a \
	VHADDPS       d, c, c \
	VHADDPS       c, a, a \
	VEXTRACTF32X4 $1, a, X31 \
	VADDPS        X31, xa, xa

// func dotAVX512(a, b *float32, k int) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   k+16(FP), CX
	TAILMASK(BX)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ   AX, AX

dot64:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JG   dot16
	VMOVUPS     (SI)(AX*4), Z4
	VMOVUPS     64(SI)(AX*4), Z5
	VMOVUPS     128(SI)(AX*4), Z6
	VMOVUPS     192(SI)(AX*4), Z7
	VFMADD231PS (DI)(AX*4), Z4, Z0
	VFMADD231PS 64(DI)(AX*4), Z5, Z1
	VFMADD231PS 128(DI)(AX*4), Z6, Z2
	VFMADD231PS 192(DI)(AX*4), Z7, Z3
	MOVQ        DX, AX
	JMP         dot64

dot16:
	CMPQ AX, CX
	JGE  dottail
	VMOVUPS     (SI)(AX*4), Z4
	VFMADD231PS (DI)(AX*4), Z4, Z0
	ADDQ        $16, AX
	JMP         dot16

dottail:
	KORTESTW K1, K1
	JZ       dotdone
	VMOVUPS.Z (SI)(AX*4), K1, Z4
	VMOVUPS.Z (DI)(AX*4), K1, Z5
	VFMADD231PS Z5, Z4, Z1

dotdone:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	FOLD(Z0, Y0)
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func axpyAVX512(y *float32, alpha float32, x *float32, k int)
TEXT ·axpyAVX512(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	VBROADCASTSS alpha+8(FP), Z0
	MOVQ         x+16(FP), SI
	MOVQ         k+24(FP), CX
	TAILMASK(BX)
	XORQ         AX, AX

axpy16:
	CMPQ AX, CX
	JGE  axpytail
	VMOVUPS     (DI)(AX*4), Z1
	VFMADD231PS (SI)(AX*4), Z0, Z1
	VMOVUPS     Z1, (DI)(AX*4)
	ADDQ        $16, AX
	JMP         axpy16

axpytail:
	KORTESTW K1, K1
	JZ       axpydone
	VMOVUPS.Z   (DI)(AX*4), K1, Z1
	VMOVUPS.Z   (SI)(AX*4), K1, Z2
	VFMADD231PS Z2, Z0, Z1
	VMOVUPS     Z1, K1, (DI)(AX*4)

axpydone:
	VZEROUPPER
	RET

// func mv4AVX512(out, x, w *float32, ldw, k int)
// out[j] = Σ_{c<k} x[c]·w[j·ldw+c] for j < 4.
TEXT ·mv4AVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ ldw+24(FP), BX
	MOVQ k+32(FP), CX
	TAILMASK(DX)
	SHLQ $2, BX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	XORQ   AX, AX

mv32:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JG   mv16
	VMOVUPS     (SI)(AX*4), Z8
	VMOVUPS     64(SI)(AX*4), Z9
	VFMADD231PS (R8)(AX*4), Z8, Z0
	VFMADD231PS (R9)(AX*4), Z8, Z1
	VFMADD231PS (R10)(AX*4), Z8, Z2
	VFMADD231PS (R11)(AX*4), Z8, Z3
	VFMADD231PS 64(R8)(AX*4), Z9, Z4
	VFMADD231PS 64(R9)(AX*4), Z9, Z5
	VFMADD231PS 64(R10)(AX*4), Z9, Z6
	VFMADD231PS 64(R11)(AX*4), Z9, Z7
	MOVQ        DX, AX
	JMP         mv32

mv16:
	CMPQ AX, CX
	JGE  mvtail
	VMOVUPS     (SI)(AX*4), Z8
	VFMADD231PS (R8)(AX*4), Z8, Z0
	VFMADD231PS (R9)(AX*4), Z8, Z1
	VFMADD231PS (R10)(AX*4), Z8, Z2
	VFMADD231PS (R11)(AX*4), Z8, Z3
	ADDQ        $16, AX

mvtail:
	KORTESTW K1, K1
	JZ       mvdone
	VMOVUPS.Z   (SI)(AX*4), K1, Z8
	VMOVUPS.Z   (R8)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z4
	VMOVUPS.Z   (R9)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z5
	VMOVUPS.Z   (R10)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z6
	VMOVUPS.Z   (R11)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z7

mvdone:
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	FOLD(Z0, Y0)
	FOLD(Z1, Y1)
	FOLD(Z2, Y2)
	FOLD(Z3, Y3)
	HSUM4(Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET

// G6 multiplies x (a zmm) into one row of six accumulators.
#define G6(x, a0, a1, a2, a3, a4, a5) \
	VFMADD231PS Z24, x, a0 \
	VFMADD231PS Z25, x, a1 \
	VFMADD231PS Z26, x, a2 \
	VFMADD231PS Z27, x, a3 \
	VFMADD231PS Z28, x, a4 \
	VFMADD231PS Z29, x, a5

// STORE6 reduces six ymm accumulators (already folded, all in Y0..Y15)
// and writes the six sums at p.
#define STORE6(a0, a1, a2, a3, a4, a5, xa0, xa4, p) \
	HSUM4(a0, a1, a2, a3, xa0) \
	VMOVUPS       xa0, (p) \
	VHADDPS       a5, a4, a4 \
	VEXTRACTF32X4 $1, a4, X31 \
	VADDPS        X31, xa4, xa4 \
	VHADDPS       xa4, xa4, xa4 \
	VMOVLPS       xa4, 16(p)

// func gemm4x6AVX512(out *float32, ldo int, x *float32, ldx int, w *float32, ldw int, k int)
// out[i·ldo+j] = Σ_{c<k} x[i·ldx+c]·w[j·ldw+c] for i < 4, j < 6.
TEXT ·gemm4x6AVX512(SB), NOSPLIT, $0-56
	MOVQ k+48(FP), CX
	TAILMASK(DX)
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), BX
	MOVQ w+32(FP), R8
	MOVQ ldw+40(FP), AX
	SHLQ $2, BX
	SHLQ $2, AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), R12
	LEAQ (R12)(AX*1), R13
	LEAQ (SI)(BX*1), DI
	LEAQ (DI)(BX*1), DX
	LEAQ (DX)(BX*1), BX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	VXORPS Z12, Z12, Z12
	VXORPS Z13, Z13, Z13
	VXORPS Z14, Z14, Z14
	VXORPS Z15, Z15, Z15
	VXORPS Z16, Z16, Z16
	VXORPS Z17, Z17, Z17
	VXORPS Z18, Z18, Z18
	VXORPS Z19, Z19, Z19
	VXORPS Z20, Z20, Z20
	VXORPS Z21, Z21, Z21
	VXORPS Z22, Z22, Z22
	VXORPS Z23, Z23, Z23
	XORQ   AX, AX

gemmloop:
	CMPQ AX, CX
	JGE  gemmtail
	VMOVUPS (R8)(AX*4), Z24
	VMOVUPS (R9)(AX*4), Z25
	VMOVUPS (R10)(AX*4), Z26
	VMOVUPS (R11)(AX*4), Z27
	VMOVUPS (R12)(AX*4), Z28
	VMOVUPS (R13)(AX*4), Z29
	VMOVUPS (SI)(AX*4), Z30
	VMOVUPS (DI)(AX*4), Z31
	G6(Z30, Z0, Z1, Z2, Z3, Z4, Z5)
	VMOVUPS (DX)(AX*4), Z30
	G6(Z31, Z6, Z7, Z8, Z9, Z10, Z11)
	VMOVUPS (BX)(AX*4), Z31
	G6(Z30, Z12, Z13, Z14, Z15, Z16, Z17)
	G6(Z31, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ    $16, AX
	JMP     gemmloop

gemmtail:
	KORTESTW K1, K1
	JZ       gemmdone
	VMOVUPS.Z (R8)(AX*4), K1, Z24
	VMOVUPS.Z (R9)(AX*4), K1, Z25
	VMOVUPS.Z (R10)(AX*4), K1, Z26
	VMOVUPS.Z (R11)(AX*4), K1, Z27
	VMOVUPS.Z (R12)(AX*4), K1, Z28
	VMOVUPS.Z (R13)(AX*4), K1, Z29
	VMOVUPS.Z (SI)(AX*4), K1, Z30
	VMOVUPS.Z (DI)(AX*4), K1, Z31
	G6(Z30, Z0, Z1, Z2, Z3, Z4, Z5)
	VMOVUPS.Z (DX)(AX*4), K1, Z30
	G6(Z31, Z6, Z7, Z8, Z9, Z10, Z11)
	VMOVUPS.Z (BX)(AX*4), K1, Z31
	G6(Z30, Z12, Z13, Z14, Z15, Z16, Z17)
	G6(Z31, Z18, Z19, Z20, Z21, Z22, Z23)

gemmdone:
	MOVQ out+0(FP), DI
	MOVQ ldo+8(FP), DX
	SHLQ $2, DX
	FOLD(Z0, Y0)
	FOLD(Z1, Y1)
	FOLD(Z2, Y2)
	FOLD(Z3, Y3)
	FOLD(Z4, Y4)
	FOLD(Z5, Y5)
	FOLD(Z6, Y6)
	FOLD(Z7, Y7)
	FOLD(Z8, Y8)
	FOLD(Z9, Y9)
	FOLD(Z10, Y10)
	FOLD(Z11, Y11)
	STORE6(Y0, Y1, Y2, Y3, Y4, Y5, X0, X4, DI)
	ADDQ DX, DI
	STORE6(Y6, Y7, Y8, Y9, Y10, Y11, X6, X10, DI)
	ADDQ DX, DI
	VMOVAPS Z12, Z0
	VMOVAPS Z13, Z1
	VMOVAPS Z14, Z2
	VMOVAPS Z15, Z3
	VMOVAPS Z16, Z4
	VMOVAPS Z17, Z5
	VMOVAPS Z18, Z6
	VMOVAPS Z19, Z7
	VMOVAPS Z20, Z8
	VMOVAPS Z21, Z9
	VMOVAPS Z22, Z10
	VMOVAPS Z23, Z11
	FOLD(Z0, Y0)
	FOLD(Z1, Y1)
	FOLD(Z2, Y2)
	FOLD(Z3, Y3)
	FOLD(Z4, Y4)
	FOLD(Z5, Y5)
	FOLD(Z6, Y6)
	FOLD(Z7, Y7)
	FOLD(Z8, Y8)
	FOLD(Z9, Y9)
	FOLD(Z10, Y10)
	FOLD(Z11, Y11)
	STORE6(Y0, Y1, Y2, Y3, Y4, Y5, X0, X4, DI)
	ADDQ DX, DI
	STORE6(Y6, Y7, Y8, Y9, Y10, Y11, X6, X10, DI)
	VZEROUPPER
	RET

// Q8 kernels with AVX-512 VNNI. VPDPBUSD multiplies unsigned by signed
// bytes, so each product x·w is formed as |x|·(w with x's sign): K2 marks
// the negative x bytes and w is negated there (w is never -128 in a
// quantized block, so the negation is exact).

// Q8ROW2 accumulates two blocks of one W row into acc (a zmm whose low
// 8 lanes take block b, high 8 lanes block b+1). w points at block b; Z21
// = |x|, K2 = sign(x), Z22 = x scales, Z23 = 0; t, u, s, v are scratch
// zmm and xs, xv, ys their narrower names.
#define Q8ROW2(w, acc, t, yt, u, s, ys, xs, v, xv) \
	VMOVDQU32     2(w), yt \
	VINSERTI64X4  $1, 36(w), t, t \
	VPSUBB        t, Z23, K2, t \
	VPXORD        u, u, u \
	VPDPBUSD      t, Z21, u \
	VCVTDQ2PS     u, u \
	VPBROADCASTW  (w), xs \
	VPBROADCASTW  34(w), xv \
	VINSERTI32X4  $1, xv, ys, ys \
	VCVTPH2PS     ys, s \
	VMULPS        Z22, s, s \
	VFMADD231PS   s, u, acc

// Q8ROW1 is Q8ROW2 for a single block (the upper lanes stay zero).
#define Q8ROW1(w, acc, t, yt, u, s, ys, xs) \
	VMOVDQU32     2(w), yt \
	VPSUBB        t, Z23, K2, t \
	VPXORD        u, u, u \
	VPDPBUSD      t, Z21, u \
	VCVTDQ2PS     u, u \
	VPBROADCASTW  (w), xs \
	VCVTPH2PS     xs, ys \
	VMULPS        Z22, s, s \
	VFMADD231PS   s, u, acc

// func q8dot4VNNI(out *float32, xq *int8, xd *float32, w *byte, ldw, nb int)
// Same contract as q8dot4AVX2.
TEXT ·q8dot4VNNI(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ xq+8(FP), SI
	MOVQ xd+16(FP), DX
	MOVQ w+24(FP), R8
	MOVQ ldw+32(FP), BX
	MOVQ nb+40(FP), CX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z23, Z23, Z23

q8vloop:
	CMPQ CX, $2
	JL   q8vtail
	VMOVDQU64     (SI), Z20
	VPABSB        Z20, Z21
	VPMOVB2M      Z20, K2
	VBROADCASTSS  (DX), Z22
	VBROADCASTSS  4(DX), Y24
	VINSERTF64X4  $1, Y24, Z22, Z22
	Q8ROW2(R8, Z0, Z4, Y4, Z5, Z6, Y6, X6, Z7, X7)
	Q8ROW2(R9, Z1, Z8, Y8, Z9, Z10, Y10, X10, Z11, X11)
	Q8ROW2(R10, Z2, Z12, Y12, Z13, Z14, Y14, X14, Z15, X15)
	Q8ROW2(R11, Z3, Z16, Y16, Z17, Z18, Y18, X18, Z19, X19)
	ADDQ          $64, SI
	ADDQ          $8, DX
	ADDQ          $68, R8
	ADDQ          $68, R9
	ADDQ          $68, R10
	ADDQ          $68, R11
	SUBQ          $2, CX
	JMP           q8vloop

q8vtail:
	TESTQ CX, CX
	JZ    q8vdone
	VMOVDQU32     (SI), Y20
	VPABSB        Y20, Y21
	VPMOVB2M      Y20, K2
	VBROADCASTSS  (DX), Y22
	Q8ROW1(R8, Z0, Z4, Y4, Z5, Z6, Y6, X6)
	Q8ROW1(R9, Z1, Z8, Y8, Z9, Z10, Y10, X10)
	Q8ROW1(R10, Z2, Z12, Y12, Z13, Z14, Y14, X14)
	Q8ROW1(R11, Z3, Z16, Y16, Z17, Z18, Y18, X18)

q8vdone:
	FOLD(Z0, Y0)
	FOLD(Z1, Y1)
	FOLD(Z2, Y2)
	FOLD(Z3, Y3)
	HSUM4(Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET
