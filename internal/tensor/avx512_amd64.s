//go:build amd64 && !purego

#include "textflag.h"
#include "avx512_amd64.h"

// The AVX-512 F32 kernels take any k ≥ 0: the last k%16 columns are read
// with a zero-masking load (masked-off lanes never fault).

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

// The F32 matmul kernels below (dot1, mv4, mv8, gemm4x6) all sum each
// output in one canonical order, so an output's bits do not depend on which
// kernel computed it: one zmm accumulator per output, FMA over the columns
// in steps of 16 from column 0, the last k%16 columns as one more FMA of
// zero-masked loads, then FOLD (lane i += lane i+8) and the tree
// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) (HSUM4, or HSUM1 for one output).

// HSUM1 leaves in xa the canonical horizontal sum of ymm a (xa its xmm).
#define HSUM1(a, xa) \
	VHADDPS       a, a, a \
	VHADDPS       a, a, a \
	VEXTRACTF32X4 $1, a, X31 \
	VADDPS        X31, xa, xa

// func dot1AVX512(x, w *float32, k int) float32
// Σ_{c<k} x[c]·w[c] in the canonical order (a single FMA chain: for the
// few rows the multi-row kernels leave over).
TEXT ·dot1AVX512(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), R8
	MOVQ   k+16(FP), CX
	TAILMASK(DX)
	VXORPS Z0, Z0, Z0
	XORQ   AX, AX

d1loop:
	CMPQ AX, CX
	JGE  d1tail
	VMOVUPS     (SI)(AX*4), Z8
	VFMADD231PS (R8)(AX*4), Z8, Z0
	ADDQ        $16, AX
	JMP         d1loop

d1tail:
	KORTESTW K1, K1
	JZ       d1done
	VMOVUPS.Z   (SI)(AX*4), K1, Z8
	VMOVUPS.Z   (R8)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z0

d1done:
	FOLD(Z0, Y0)
	HSUM1(Y0, X0)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func mv4AVX512(out, x, w *float32, ldw, k int)
// out[j] = Σ_{c<k} x[c]·w[j·ldw+c] for j < 4, in the canonical order.
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
	XORQ   AX, AX

mv4loop:
	CMPQ AX, CX
	JGE  mv4tail
	VMOVUPS     (SI)(AX*4), Z8
	VFMADD231PS (R8)(AX*4), Z8, Z0
	VFMADD231PS (R9)(AX*4), Z8, Z1
	VFMADD231PS (R10)(AX*4), Z8, Z2
	VFMADD231PS (R11)(AX*4), Z8, Z3
	ADDQ        $16, AX
	JMP         mv4loop

mv4tail:
	KORTESTW K1, K1
	JZ       mv4done
	VMOVUPS.Z   (SI)(AX*4), K1, Z8
	VMOVUPS.Z   (R8)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z0
	VMOVUPS.Z   (R9)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z1
	VMOVUPS.Z   (R10)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z2
	VMOVUPS.Z   (R11)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z3

mv4done:
	FOLD(Z0, Y0)
	FOLD(Z1, Y1)
	FOLD(Z2, Y2)
	FOLD(Z3, Y3)
	HSUM4(Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET

// func mv8AVX512(out, x, w *float32, ldw, k int)
// out[j] = Σ_{c<k} x[c]·w[j·ldw+c] for j < 8, in the canonical order: the
// matvec kernel (eight independent FMA chains hide the FMA latency).
TEXT ·mv8AVX512(SB), NOSPLIT, $0-40
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ ldw+24(FP), BX
	MOVQ k+32(FP), CX
	TAILMASK(DX)
	SHLQ $2, BX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	LEAQ (R11)(BX*1), R12
	LEAQ (R12)(BX*1), R13
	LEAQ (R13)(BX*1), DI
	LEAQ (DI)(BX*1), DX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	XORQ   AX, AX

mv8loop:
	CMPQ AX, CX
	JGE  mv8tail
	VMOVUPS     (SI)(AX*4), Z8
	VFMADD231PS (R8)(AX*4), Z8, Z0
	VFMADD231PS (R9)(AX*4), Z8, Z1
	VFMADD231PS (R10)(AX*4), Z8, Z2
	VFMADD231PS (R11)(AX*4), Z8, Z3
	VFMADD231PS (R12)(AX*4), Z8, Z4
	VFMADD231PS (R13)(AX*4), Z8, Z5
	VFMADD231PS (DI)(AX*4), Z8, Z6
	VFMADD231PS (DX)(AX*4), Z8, Z7
	ADDQ        $16, AX
	JMP         mv8loop

mv8tail:
	KORTESTW K1, K1
	JZ       mv8done
	VMOVUPS.Z   (SI)(AX*4), K1, Z8
	VMOVUPS.Z   (R8)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z0
	VMOVUPS.Z   (R9)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z1
	VMOVUPS.Z   (R10)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z2
	VMOVUPS.Z   (R11)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z3
	VMOVUPS.Z   (R12)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z4
	VMOVUPS.Z   (R13)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z5
	VMOVUPS.Z   (DI)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z6
	VMOVUPS.Z   (DX)(AX*4), K1, Z9
	VFMADD231PS Z9, Z8, Z7

mv8done:
	MOVQ out+0(FP), DI
	FOLD(Z0, Y0)
	FOLD(Z1, Y1)
	FOLD(Z2, Y2)
	FOLD(Z3, Y3)
	FOLD(Z4, Y4)
	FOLD(Z5, Y5)
	FOLD(Z6, Y6)
	FOLD(Z7, Y7)
	HSUM4(Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	HSUM4(Y4, Y5, Y6, Y7, X4)
	VMOVUPS X4, 16(DI)
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

// func packx4AVX512(dst, x *float32, ldx, kb, tiles int)
// packX for AVX-512: per tile of 4 x rows (ldx apart), per step of 16
// columns, the 16 floats of each row in turn; the last kb%16 columns of
// a step zero-padded (masked loads).
TEXT ·packx4AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), BX
	SHLQ $2, BX
	MOVQ kb+24(FP), CX
	TAILMASK(DX)
	MOVQ tiles+32(FP), R12

pxtile:
	LEAQ (SI)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	XORQ AX, AX
	CMPQ AX, CX
	JGE  pxtail

pxloop:
	VMOVUPS (SI)(AX*4), Z0
	VMOVUPS (R9)(AX*4), Z1
	VMOVUPS (R10)(AX*4), Z2
	VMOVUPS (R11)(AX*4), Z3
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     pxloop

pxtail:
	KORTESTW K1, K1
	JZ       pxnext
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VMOVUPS.Z (R9)(AX*4), K1, Z1
	VMOVUPS.Z (R10)(AX*4), K1, Z2
	VMOVUPS.Z (R11)(AX*4), K1, Z3
	VMOVUPS   Z0, 0(DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z2, 128(DI)
	VMOVUPS   Z3, 192(DI)
	ADDQ      $256, DI

pxnext:
	LEAQ (R11)(BX*1), SI
	DECQ R12
	JNZ  pxtile
	VZEROUPPER
	RET

// func gemm4x6AVX512(out *float32, ldo int, xp *float32, w *float32, ldw int, k int, acc *float32, flags int, pf *float32, ntiles int)
// For each of ntiles tiles t (x rows 4t..4t+3, out rows likewise, acc
// from 384t floats): out[i·ldo+j] = Σ_{c<k} x[i][c]·w[j·ldw+c] for i < 4,
// j < 6, over one block of columns of a longer sum. x is packed (packX):
// per tile and step of 16 columns, 16 floats of each row in turn, so the
// tiles are one sequential stream of 256 bytes per step. A tile's 24
// accumulators (16 lanes each, row-major by i then j) start from its acc
// (flags&1) or zero; they end stored back to acc or, when flags&2, reduced
// and written to out. Only a final block may have k%16 ≠ 0. Split into
// blocks or not, every lane sums the same products in the same order (the
// canonical one). Each step also prefetches into L2 one cache line of the
// 6×k block at pf (ldw apart), the W block the next call will read: two
// rows per tile over the first three tiles, or with flags&4 one row per
// tile over the first six (a gentler stream of memory requests); and, with
// flags&1, one line of the next tile's parked accumulators into L1.
TEXT ·gemm4x6AVX512(SB), NOSPLIT, $40-80
	MOVQ k+40(FP), CX
	TAILMASK(DX)
	MOVQ w+24(FP), R8
	MOVQ ldw+32(FP), AX
	SHLQ $2, AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), R12
	LEAQ (R12)(AX*1), R13
	MOVQ pf+64(FP), R14
	LEAQ (R14)(AX*1), R15
	SHLQ $1, AX
	MOVQ AX, pfs-40(SP)
	MOVQ $2, pfn-32(SP)
	TESTQ $4, flags+56(FP)
	JZ    gemmpf2
	// One W row per tile over the first six tiles.
	MOVQ R14, R15
	SHRQ $1, AX
	MOVQ AX, pfs-40(SP)
	MOVQ $5, pfn-32(SP)

gemmpf2:
	MOVQ xp+16(FP), AX
	MOVQ AX, x-8(SP)
	MOVQ out+0(FP), AX
	MOVQ AX, o-16(SP)
	MOVQ acc+48(FP), AX
	MOVQ AX, a-24(SP)
	// BX: the next tile's parked accumulators, prefetched into L1 (with
	// gemmLoad; else the current W row, a no-op).
	MOVQ R8, BX
	TESTQ $1, flags+56(FP)
	JZ    gemmtile
	LEAQ 1536(AX), BX

gemmtile:
	MOVQ x-8(SP), SI
	TESTQ  $1, flags+56(FP)
	JZ     gemmzero
	MOVQ   a-24(SP), AX
	VMOVUPS 0(AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	VMOVUPS 256(AX), Z4
	VMOVUPS 320(AX), Z5
	VMOVUPS 384(AX), Z6
	VMOVUPS 448(AX), Z7
	VMOVUPS 512(AX), Z8
	VMOVUPS 576(AX), Z9
	VMOVUPS 640(AX), Z10
	VMOVUPS 704(AX), Z11
	VMOVUPS 768(AX), Z12
	VMOVUPS 832(AX), Z13
	VMOVUPS 896(AX), Z14
	VMOVUPS 960(AX), Z15
	VMOVUPS 1024(AX), Z16
	VMOVUPS 1088(AX), Z17
	VMOVUPS 1152(AX), Z18
	VMOVUPS 1216(AX), Z19
	VMOVUPS 1280(AX), Z20
	VMOVUPS 1344(AX), Z21
	VMOVUPS 1408(AX), Z22
	VMOVUPS 1472(AX), Z23
	JMP    gemmstart

gemmzero:
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

gemmstart:
	XORQ   AX, AX
	CMPQ   AX, CX
	JGE    gemmtail

gemmloop:
	PREFETCHT1 (R14)(AX*4)
	PREFETCHT1 (R15)(AX*4)
	PREFETCHT0 (BX)(AX*4)
	VMOVUPS (R8)(AX*4), Z24
	VMOVUPS (R9)(AX*4), Z25
	VMOVUPS (R10)(AX*4), Z26
	VMOVUPS (R11)(AX*4), Z27
	VMOVUPS (R12)(AX*4), Z28
	VMOVUPS (R13)(AX*4), Z29
	VMOVUPS 0(SI), Z30
	VMOVUPS 64(SI), Z31
	G6(Z30, Z0, Z1, Z2, Z3, Z4, Z5)
	VMOVUPS 128(SI), Z30
	G6(Z31, Z6, Z7, Z8, Z9, Z10, Z11)
	VMOVUPS 192(SI), Z31
	G6(Z30, Z12, Z13, Z14, Z15, Z16, Z17)
	G6(Z31, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ    $256, SI
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     gemmloop

gemmtail:
	KORTESTW K1, K1
	JZ       gemmdone
	VMOVUPS.Z (R8)(AX*4), K1, Z24
	VMOVUPS.Z (R9)(AX*4), K1, Z25
	VMOVUPS.Z (R10)(AX*4), K1, Z26
	VMOVUPS.Z (R11)(AX*4), K1, Z27
	VMOVUPS.Z (R12)(AX*4), K1, Z28
	VMOVUPS.Z (R13)(AX*4), K1, Z29
	VMOVUPS.Z 0(SI), K1, Z30
	VMOVUPS.Z 64(SI), K1, Z31
	G6(Z30, Z0, Z1, Z2, Z3, Z4, Z5)
	VMOVUPS.Z 128(SI), K1, Z30
	G6(Z31, Z6, Z7, Z8, Z9, Z10, Z11)
	VMOVUPS.Z 192(SI), K1, Z31
	G6(Z30, Z12, Z13, Z14, Z15, Z16, Z17)
	G6(Z31, Z18, Z19, Z20, Z21, Z22, Z23)
	ADDQ      $256, SI

gemmdone:
	TESTQ $2, flags+56(FP)
	JNZ   gemmreduce
	MOVQ  a-24(SP), DI
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	VMOVUPS Z8, 512(DI)
	VMOVUPS Z9, 576(DI)
	VMOVUPS Z10, 640(DI)
	VMOVUPS Z11, 704(DI)
	VMOVUPS Z12, 768(DI)
	VMOVUPS Z13, 832(DI)
	VMOVUPS Z14, 896(DI)
	VMOVUPS Z15, 960(DI)
	VMOVUPS Z16, 1024(DI)
	VMOVUPS Z17, 1088(DI)
	VMOVUPS Z18, 1152(DI)
	VMOVUPS Z19, 1216(DI)
	VMOVUPS Z20, 1280(DI)
	VMOVUPS Z21, 1344(DI)
	VMOVUPS Z22, 1408(DI)
	VMOVUPS Z23, 1472(DI)
	JMP   gemmnext

gemmreduce:
	// The canonical reduction of all 24 sums, two accumulators per zmm:
	// fold (lane i + lane i+8), two pairwise-add levels within 128-bit
	// lanes (as VHADDPS), then the 0..3 partial plus the 4..7 partial.
	// Pairs: rows 0 and 1 of columns 0..3 (U), rows 2 and 3 (V), and the
	// columns 4, 5 of all rows (W).
	FOLD2(Z0, Z6, Z0)
	FOLD2(Z1, Z7, Z1)
	FOLD2(Z2, Z8, Z2)
	FOLD2(Z3, Z9, Z3)
	FOLD2(Z12, Z18, Z12)
	FOLD2(Z13, Z19, Z13)
	FOLD2(Z14, Z20, Z14)
	FOLD2(Z15, Z21, Z15)
	FOLD2(Z4, Z10, Z4)
	FOLD2(Z5, Z11, Z5)
	FOLD2(Z16, Z22, Z16)
	FOLD2(Z17, Z23, Z17)
	HADD2(Z0, Z1, Z0)
	HADD2(Z2, Z3, Z2)
	HADD2(Z12, Z13, Z12)
	HADD2(Z14, Z15, Z14)
	HADD2(Z4, Z5, Z4)
	HADD2(Z16, Z17, Z16)
	HADD2(Z0, Z2, Z0)    // U: 128-bit lanes row 0 (0..3, 4..7 partials), row 1 (same)
	HADD2(Z12, Z14, Z12) // V: rows 2, 3
	HADD2(Z4, Z16, Z4)   // W: columns 4, 5 of rows 0, 2 (0..3, 4..7), then rows 1, 3
	VSHUFF64X2 $0x88, Z12, Z0, Z24
	VSHUFF64X2 $0xDD, Z12, Z0, Z25
	VADDPS     Z25, Z24, Z0 // rows 0..3, columns 0..3, one row per 128-bit lane
	VSHUFF64X2 $0x88, Z4, Z4, Z24
	VSHUFF64X2 $0xDD, Z4, Z4, Z25
	VADDPS     Z25, Z24, Z4 // columns 4, 5: rows 0, 2 then rows 1, 3
	MOVQ o-16(SP), DI
	MOVQ ldo+8(FP), DX
	SHLQ $2, DX
	VEXTRACTF32X4 $1, Z4, X5
	VMOVUPS       X0, (DI)
	VMOVLPS       X4, 16(DI)
	ADDQ          DX, DI
	VEXTRACTF32X4 $1, Z0, (DI)
	VMOVLPS       X5, 16(DI)
	ADDQ          DX, DI
	VEXTRACTF32X4 $2, Z0, (DI)
	VMOVHPS       X4, 16(DI)
	ADDQ          DX, DI
	VEXTRACTF32X4 $3, Z0, (DI)
	VMOVHPS       X5, 16(DI)

gemmnext:
	MOVQ SI, x-8(SP)
	MOVQ ldo+8(FP), AX
	SHLQ $4, AX
	ADDQ AX, o-16(SP)
	ADDQ $1536, a-24(SP)
	TESTQ $1, flags+56(FP)
	JZ    gemmpfw
	ADDQ $1536, BX

gemmpfw:
	CMPQ pfn-32(SP), $0
	JEQ  gemmnopf
	DECQ pfn-32(SP)
	MOVQ pfs-40(SP), AX
	ADDQ AX, R14
	ADDQ AX, R15

gemmnopf:
	DECQ ntiles+72(FP)
	JNZ  gemmtile
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

// func q8gemm4x4VNNI(out *float32, ldo int, xu *byte, ldx int, xd *float32, ldd int, w *byte, ldw, nb int)
// out[i·ldo+j] = Σ_b xd[i·ldd+b]·dw(j,b)·Σ_t (xu[i·ldx+32b+t]-128)·q(j,b,t) for i, j < 4:
// four activation rows (quantized, stored offset by +128 as unsigned bytes)
// times four W rows in GGML Q8_0 blocks. The offset makes each product
// unsigned×signed as VPDPBUSD wants; the extra 128·Σq per W block is
// subtracted by starting each block's integer sum at -128·Σq (Z24..Z27).
TEXT ·q8gemm4x4VNNI(SB), NOSPLIT, $0-72
	MOVQ xu+16(FP), SI
	MOVQ ldx+24(FP), AX
	LEAQ (SI)(AX*1), R12
	LEAQ (R12)(AX*1), R13
	LEAQ (R13)(AX*1), R14
	MOVQ xd+32(FP), DX
	MOVQ ldd+40(FP), BX
	SHLQ $2, BX
	LEAQ (DX)(BX*2), R15
	ADDQ BX, R15
	MOVQ w+48(FP), R8
	MOVQ ldw+56(FP), AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	MOVQ nb+64(FP), CX

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

g44loop:
	CMPQ CX, $2
	JL   g44tail
	VMOVDQU32 2(R8), Y16
	VINSERTI64X4 $1, 36(R8), Z16, Z16
	VMOVDQU32 2(R9), Y17
	VINSERTI64X4 $1, 36(R9), Z17, Z17
	VMOVDQU32 2(R10), Y18
	VINSERTI64X4 $1, 36(R10), Z18, Z18
	VMOVDQU32 2(R11), Y19
	VINSERTI64X4 $1, 36(R11), Z19, Z19
	VPBROADCASTW (R8), X20
	VPBROADCASTW 34(R8), X31
	VINSERTI32X4 $1, X31, Y20, Y20
	VCVTPH2PS Y20, Z20
	VPBROADCASTW (R9), X21
	VPBROADCASTW 34(R9), X31
	VINSERTI32X4 $1, X31, Y21, Y21
	VCVTPH2PS Y21, Z21
	VPBROADCASTW (R10), X22
	VPBROADCASTW 34(R10), X31
	VINSERTI32X4 $1, X31, Y22, Y22
	VCVTPH2PS Y22, Z22
	VPBROADCASTW (R11), X23
	VPBROADCASTW 34(R11), X31
	VINSERTI32X4 $1, X31, Y23, Y23
	VCVTPH2PS Y23, Z23
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z24, Z24, Z24
	VPDPBUSD Z16, Z28, Z24
	VPSUBD Z24, Z29, Z24
	VPXORD Z25, Z25, Z25
	VPDPBUSD Z17, Z28, Z25
	VPSUBD Z25, Z29, Z25
	VPXORD Z26, Z26, Z26
	VPDPBUSD Z18, Z28, Z26
	VPSUBD Z26, Z29, Z26
	VPXORD Z27, Z27, Z27
	VPDPBUSD Z19, Z28, Z27
	VPSUBD Z27, Z29, Z27
	VMOVDQU32 (SI), Z28
	VBROADCASTSS (DX), Z29
	VBROADCASTSS 4(DX), Y31
	VINSERTF64X4 $1, Y31, Z29, Z29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z0
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z1
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z2
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z3
	VMOVDQU32 (R12), Z28
	VBROADCASTSS (DX)(BX*1), Z29
	VBROADCASTSS 4(DX)(BX*1), Y31
	VINSERTF64X4 $1, Y31, Z29, Z29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z4
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z5
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z6
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z7
	VMOVDQU32 (R13), Z28
	VBROADCASTSS (DX)(BX*2), Z29
	VBROADCASTSS 4(DX)(BX*2), Y31
	VINSERTF64X4 $1, Y31, Z29, Z29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z8
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z9
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z10
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z11
	VMOVDQU32 (R14), Z28
	VBROADCASTSS (R15), Z29
	VBROADCASTSS 4(R15), Y31
	VINSERTF64X4 $1, Y31, Z29, Z29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z12
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z13
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z14
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z15
	ADDQ $68, R8
	ADDQ $68, R9
	ADDQ $68, R10
	ADDQ $68, R11
	ADDQ $64, SI
	ADDQ $64, R12
	ADDQ $64, R13
	ADDQ $64, R14
	ADDQ $8, DX
	ADDQ $8, R15
	SUBQ $2, CX
	JMP  g44loop

g44tail:
	TESTQ CX, CX
	JZ    g44done
	VMOVDQU32 2(R8), Y16
	VMOVDQU32 2(R9), Y17
	VMOVDQU32 2(R10), Y18
	VMOVDQU32 2(R11), Y19
	VPBROADCASTW (R8), X20
	VCVTPH2PS X20, Y20
	VPBROADCASTW (R9), X21
	VCVTPH2PS X21, Y21
	VPBROADCASTW (R10), X22
	VCVTPH2PS X22, Y22
	VPBROADCASTW (R11), X23
	VCVTPH2PS X23, Y23
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z24, Z24, Z24
	VPDPBUSD Z16, Z28, Z24
	VPSUBD Z24, Z29, Z24
	VPXORD Z25, Z25, Z25
	VPDPBUSD Z17, Z28, Z25
	VPSUBD Z25, Z29, Z25
	VPXORD Z26, Z26, Z26
	VPDPBUSD Z18, Z28, Z26
	VPSUBD Z26, Z29, Z26
	VPXORD Z27, Z27, Z27
	VPDPBUSD Z19, Z28, Z27
	VPSUBD Z27, Z29, Z27
	VMOVDQU32 (SI), Y28
	VBROADCASTSS (DX), Y29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z0
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z1
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z2
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z3
	VMOVDQU32 (R12), Y28
	VBROADCASTSS (DX)(BX*1), Y29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z4
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z5
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z6
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z7
	VMOVDQU32 (R13), Y28
	VBROADCASTSS (DX)(BX*2), Y29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z8
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z9
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z10
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z11
	VMOVDQU32 (R14), Y28
	VBROADCASTSS (R15), Y29
	VMOVDQA32 Z24, Z30
	VPDPBUSD Z16, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z20, Z29, Z31
	VFMADD231PS Z31, Z30, Z12
	VMOVDQA32 Z25, Z30
	VPDPBUSD Z17, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z21, Z29, Z31
	VFMADD231PS Z31, Z30, Z13
	VMOVDQA32 Z26, Z30
	VPDPBUSD Z18, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z22, Z29, Z31
	VFMADD231PS Z31, Z30, Z14
	VMOVDQA32 Z27, Z30
	VPDPBUSD Z19, Z28, Z30
	VCVTDQ2PS Z30, Z30
	VMULPS Z23, Z29, Z31
	VFMADD231PS Z31, Z30, Z15

g44done:
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
	FOLD(Z12, Y12)
	FOLD(Z13, Y13)
	FOLD(Z14, Y14)
	FOLD(Z15, Y15)
	HSUM4(Y0, Y1, Y2, Y3, X0)
	VMOVUPS X0, (DI)
	ADDQ DX, DI
	HSUM4(Y4, Y5, Y6, Y7, X4)
	VMOVUPS X4, (DI)
	ADDQ DX, DI
	HSUM4(Y8, Y9, Y10, Y11, X8)
	VMOVUPS X8, (DI)
	ADDQ DX, DI
	HSUM4(Y12, Y13, Y14, Y15, X12)
	VMOVUPS X12, (DI)
	VZEROUPPER
	RET

// func quantizeAVX512(q *int8, d *float32, x *float32, nb int)
// Quantizes nb blocks of 32 floats exactly as quantizeRow does (GGML's
// x86 quantize_row_q8_0): scale max|x|/127 rounded to float16 (d gets it
// back as float32), values round-half-to-even(x·(127/max|x|)), the
// product rounded to float32 (0 for a block of zeros). nb ≥ 1.
TEXT ·quantizeAVX512(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), DI
	MOVQ d+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ nb+24(FP), CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0x42fe0000, AX // 127.0
	VMOVD AX, X28

qloop:
	VMOVUPS       (SI), Z0
	VMOVUPS       64(SI), Z1
	VPANDD        Z31, Z0, Z2
	VPANDD        Z31, Z1, Z3
	VPMAXUD       Z3, Z2, Z2
	VEXTRACTI64X4 $1, Z2, Y3
	VPMAXUD       Y3, Y2, Y2
	VEXTRACTI128  $1, Y2, X3
	VPMAXUD       X3, X2, X2
	VPSHUFD       $0x4e, X2, X3
	VPMAXUD       X3, X2, X2
	VPSHUFD       $0xb1, X2, X3
	VPMAXUD       X3, X2, X2
	VDIVSS        X28, X2, X4
	VCVTPS2PH     $0, X4, X5
	VCVTPH2PS     X5, X6
	VMOVSS        X6, (DX)
	VMOVD         X2, AX
	VXORPS        X7, X7, X7
	TESTL         AX, AX
	JZ            qscaled
	VDIVSS        X2, X28, X7

qscaled:
	VBROADCASTSS  X7, Z7
	VMULPS        Z7, Z0, Z0
	VMULPS        Z7, Z1, Z1
	VCVTPS2DQ     Z0, Z12 // round to nearest even (MXCSR default)
	VCVTPS2DQ     Z1, Z13
	VPMOVDB       Z12, (DI)
	VPMOVDB       Z13, 16(DI)
	ADDQ          $128, SI
	ADDQ          $32, DI
	ADDQ          $4, DX
	DECQ          CX
	JNZ           qloop
	VZEROUPPER
	RET

// func quantizeQ4AVX512(dst *byte, x *float32, nb int)
// Writes nb Q4_0 blocks exactly as quantizeQ4Go does: m, the first value
// of the largest magnitude (NaNs skipped, +0 if that is 0), as the first
// lane whose |x| bits equal the maximum of the non-NaN ones; d = m·−0.125
// (the same rounding as m/−8), stored as float16; id = 1/d (0 if d is
// ±0); nibbles min(15, int8(trunc(x·id + 8.5))) with the product rounded
// (no FMA), the truncation's out-of-range 0x80000000 giving 0 as in Go;
// lo | hi<<4 as bytes. nb ≥ 1.
TEXT ·quantizeQ4AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0x7f800000, AX // +Inf: larger |x| bits are NaN
	VPBROADCASTD AX, Z30
	MOVL $0x41080000, AX // 8.5
	VPBROADCASTD AX, Z29
	MOVL $0xbe000000, AX // -0.125
	VMOVD AX, X28
	MOVL $0x3f800000, AX // 1.0
	VMOVD AX, X27
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, X26
	MOVL $0xf0f0f0f0, AX
	VPBROADCASTD AX, X25
	XORL R8, R8

q4loop:
	VMOVUPS       (SI), Z0
	VMOVUPS       64(SI), Z1
	VPANDD        Z31, Z0, Z2 // |x| as bits
	VPANDD        Z31, Z1, Z3
	VPCMPUD       $2, Z30, Z2, K1 // not NaN: |x| ≤ Inf
	VPCMPUD       $2, Z30, Z3, K2
	VMOVDQA32.Z   Z2, K1, Z4
	VMOVDQA32.Z   Z3, K2, Z5
	VPMAXUD       Z5, Z4, Z4
	VEXTRACTI64X4 $1, Z4, Y5
	VPMAXUD       Y5, Y4, Y4
	VEXTRACTI128  $1, Y4, X5
	VPMAXUD       X5, X4, X4
	VPSHUFD       $0x4e, X4, X5
	VPMAXUD       X5, X4, X4
	VPSHUFD       $0xb1, X4, X5
	VPMAXUD       X5, X4, X4 // amax in every lane
	VPBROADCASTD  X4, Z5
	VPCMPEQD      Z5, Z2, K3 // NaN bits never equal amax ≤ Inf
	VPCMPEQD      Z5, Z3, K4
	KUNPCKWD      K3, K4, K5 // lanes 0..15 from K3, 16..31 from K4
	KMOVD         K5, BX
	TZCNTL        BX, BX // 32 if no lane (amax 0, the others NaN)
	ANDL          $31, BX
	MOVL          (SI)(BX*4), DX
	ANDL          $0x80000000, DX // the sign of m
	VMOVD         X4, AX
	TESTL         AX, AX
	CMOVLEQ       R8, DX // amax 0: m = +0
	ORL           DX, AX
	VMOVD         AX, X6
	VMULSS        X28, X6, X6 // d
	VCVTPS2PH     $0, X6, X8
	VMOVD         X8, DX
	MOVW          DX, (DI)
	VXORPS        X7, X7, X7
	VMOVD         X6, AX
	TESTL         $0x7fffffff, AX
	JZ            q4scaled
	VDIVSS        X6, X27, X7 // id

q4scaled:
	VBROADCASTSS X7, Z7
	VMULPS       Z7, Z0, Z0
	VMULPS       Z7, Z1, Z1
	VADDPS       Z29, Z0, Z0
	VADDPS       Z29, Z1, Z1
	VCVTTPS2DQ   Z0, Z0
	VCVTTPS2DQ   Z1, Z1
	VPMOVDB      Z0, X0 // int8(·): the low bytes
	VPMOVDB      Z1, X1
	VPMINSB      X26, X0, X0
	VPMINSB      X26, X1, X1
	VPSLLW       $4, X1, X1
	VPTERNLOGD   $0xea, X0, X25, X1 // (hi<<4 & 0xf0) | lo
	VMOVDQU      X1, 2(DI)
	ADDQ         $128, SI
	ADDQ         $18, DI
	DECQ         CX
	JNZ          q4loop
	VZEROUPPER
	RET

// EXPCONSTS loads the constants of EXP into Z16..Z27: log2(e), ln2 split
// in two (0.693359375, -2.12194440e-4), the Cephes expf polynomial
// 1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
// 1.6666665459e-1, 5.0000001201e-1, then 1 and the clamp bounds -87.33654,
// 88.3762626647949.
#define EXPCONSTS \
	MOVL         $0x3fb8aa3b, AX \
	VPBROADCASTD AX, Z16 \
	MOVL         $0x3f318000, AX \
	VPBROADCASTD AX, Z17 \
	MOVL         $0xb95e8083, AX \
	VPBROADCASTD AX, Z18 \
	MOVL         $0x39506967, AX \
	VPBROADCASTD AX, Z19 \
	MOVL         $0x3ab743ce, AX \
	VPBROADCASTD AX, Z20 \
	MOVL         $0x3c088908, AX \
	VPBROADCASTD AX, Z21 \
	MOVL         $0x3d2aa9c1, AX \
	VPBROADCASTD AX, Z22 \
	MOVL         $0x3e2aaaaa, AX \
	VPBROADCASTD AX, Z23 \
	MOVL         $0x3f000000, AX \
	VPBROADCASTD AX, Z24 \
	MOVL         $0x3f800000, AX \
	VPBROADCASTD AX, Z25 \
	MOVL         $0xc2aeac4f, AX \
	VPBROADCASTD AX, Z26 \
	MOVL         $0x42b0c0a5, AX \
	VPBROADCASTD AX, Z27

// EXP sets y = e^t for each lane (Cephes expf: t = n·ln2 + r, a degree-5
// polynomial in r, scaled by 2^n), t clamped to [-87.34, 88.38]. t is
// clobbered; n, r2, q are scratch.
#define EXP(t, y, n, r2, q) \
	VMAXPS       Z26, t, t \
	VMINPS       Z27, t, t \
	VMULPS       Z16, t, n \
	VRNDSCALEPS  $0, n, n \
	VFNMADD231PS Z17, n, t \
	VFNMADD231PS Z18, n, t \
	VMOVAPS      Z19, y \
	VFMADD213PS  Z20, t, y \
	VFMADD213PS  Z21, t, y \
	VFMADD213PS  Z22, t, y \
	VFMADD213PS  Z23, t, y \
	VFMADD213PS  Z24, t, y \
	VMULPS       t, t, r2 \
	VADDPS       Z25, t, q \
	VFMADD213PS  q, r2, y \
	VSCALEFPS    n, y, y

// func softmaxAVX512(x *float32, n int)
// Normalises x[0:n] in place; n ≥ 1.
TEXT ·softmaxAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	TAILMASK(DX)
	EXPCONSTS
	MOVL         $0xff800000, AX // -Inf
	VPBROADCASTD AX, Z0
	VMOVAPS      Z0, Z1
	XORQ         AX, AX

smax:
	CMPQ   AX, CX
	JGE    smaxtail
	VMAXPS (SI)(AX*4), Z0, Z0
	ADDQ   $16, AX
	JMP    smax

smaxtail:
	VMOVUPS       (SI)(AX*4), K1, Z1 // masked-off lanes stay -Inf
	VMAXPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VBROADCASTSS  X0, Z0
	VXORPS        Z1, Z1, Z1 // sum
	XORQ          AX, AX

sexp:
	CMPQ    AX, CX
	JGE     sexptail
	VMOVUPS (SI)(AX*4), Z2
	VSUBPS  Z0, Z2, Z2
	EXP(Z2, Z3, Z4, Z5, Z6)
	VMOVUPS Z3, (SI)(AX*4)
	VADDPS  Z3, Z1, Z1
	ADDQ    $16, AX
	JMP     sexp

sexptail:
	KORTESTW  K1, K1
	JZ        ssum
	VMOVUPS.Z (SI)(AX*4), K1, Z2
	VSUBPS    Z0, Z2, Z2
	EXP(Z2, Z3, Z4, Z5, Z6)
	VMOVUPS   Z3, K1, (SI)(AX*4)
	VADDPS    Z3, Z1, K1, Z1

ssum:
	VEXTRACTF64X4 $1, Z1, Y2
	VADDPS        Y2, Y1, Y1
	VEXTRACTF128  $1, Y1, X2
	VADDPS        X2, X1, X1
	VHADDPS       X1, X1, X1
	VHADDPS       X1, X1, X1
	VDIVSS        X1, X25, X1 // 1/sum
	VBROADCASTSS  X1, Z1
	XORQ          AX, AX

sscale:
	CMPQ    AX, CX
	JGE     sscaletail
	VMULPS  (SI)(AX*4), Z1, Z2
	VMOVUPS Z2, (SI)(AX*4)
	ADDQ    $16, AX
	JMP     sscale

sscaletail:
	KORTESTW  K1, K1
	JZ        sdone
	VMOVUPS.Z (SI)(AX*4), K1, Z2
	VMULPS    Z1, Z2, Z2
	VMOVUPS   Z2, K1, (SI)(AX*4)

sdone:
	VZEROUPPER
	RET

// func swigluAVX512(gate, up *float32, n int)
// gate[i] = gate[i]/(1+e^-gate[i]) · up[i] for i < n.
TEXT ·swigluAVX512(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	TAILMASK(DX)
	EXPCONSTS
	VXORPS Z7, Z7, Z7
	XORQ   AX, AX

swloop:
	CMPQ    AX, CX
	JGE     swtail
	VMOVUPS (DI)(AX*4), Z0
	VSUBPS  Z0, Z7, Z2 // -g
	EXP(Z2, Z3, Z4, Z5, Z6)
	VADDPS  Z25, Z3, Z3
	VDIVPS  Z3, Z0, Z0
	VMULPS  (SI)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     swloop

swtail:
	KORTESTW  K1, K1
	JZ        swdone
	VMOVUPS.Z (DI)(AX*4), K1, Z0
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VSUBPS    Z0, Z7, Z2
	EXP(Z2, Z3, Z4, Z5, Z6)
	VADDPS    Z25, Z3, Z3
	VDIVPS    Z3, Z0, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(AX*4)

swdone:
	VZEROUPPER
	RET

// func axpyStridedAVX512(y, a, v *float32, stride, np, hd int)
// y[t] += Σ_{p<np} a[p]·v[p·stride+t] for t < hd; np ≥ 1, hd ≥ 1.
TEXT ·axpyStridedAVX512(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ stride+24(FP), BX
	MOVQ np+32(FP), R9
	MOVQ hd+40(FP), CX
	SHLQ $2, BX
	TAILMASK(DX)
	XORQ R10, R10

ascol:
	CMPQ    R10, CX
	JGE     astail
	VMOVUPS (DI)(R10*4), Z0
	VXORPS  Z1, Z1, Z1
	VXORPS  Z2, Z2, Z2
	VXORPS  Z3, Z3, Z3
	LEAQ    (R8)(R10*4), R11
	MOVQ    R9, R12
	MOVQ    SI, R13

asp4:
	CMPQ         R12, $4
	JL           asp1
	VBROADCASTSS (R13), Z4
	VFMADD231PS  (R11), Z4, Z0
	ADDQ         BX, R11
	VBROADCASTSS 4(R13), Z5
	VFMADD231PS  (R11), Z5, Z1
	ADDQ         BX, R11
	VBROADCASTSS 8(R13), Z6
	VFMADD231PS  (R11), Z6, Z2
	ADDQ         BX, R11
	VBROADCASTSS 12(R13), Z7
	VFMADD231PS  (R11), Z7, Z3
	ADDQ         BX, R11
	ADDQ         $16, R13
	SUBQ         $4, R12
	JMP          asp4

asp1:
	TESTQ        R12, R12
	JZ           asstore
	VBROADCASTSS (R13), Z4
	VFMADD231PS  (R11), Z4, Z0
	ADDQ         BX, R11
	ADDQ         $4, R13
	DECQ         R12
	JMP          asp1

asstore:
	VADDPS  Z1, Z0, Z0
	VADDPS  Z3, Z2, Z2
	VADDPS  Z2, Z0, Z0
	VMOVUPS Z0, (DI)(R10*4)
	ADDQ    $16, R10
	JMP     ascol

astail:
	KORTESTW  K1, K1
	JZ        asdone
	VMOVUPS.Z (DI)(R10*4), K1, Z0
	VXORPS    Z1, Z1, Z1
	LEAQ      (R8)(R10*4), R11
	MOVQ      R9, R12
	MOVQ      SI, R13

astp:
	VBROADCASTSS (R13), Z4
	VMOVUPS.Z    (R11), K1, Z5
	VFMADD231PS  Z5, Z4, Z0
	ADDQ         BX, R11
	ADDQ         $4, R13
	DECQ         R12
	JNZ          astp
	VMOVUPS      Z0, K1, (DI)(R10*4)

asdone:
	VZEROUPPER
	RET

// func scaleAVX512(x *float32, s float32, k int)
// x[c] *= s for c < k (one rounding each, as the Go loop).
TEXT ·scaleAVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), DI
	VBROADCASTSS s+8(FP), Z0
	MOVQ         k+16(FP), CX
	TAILMASK(BX)
	XORQ         AX, AX

scale16:
	CMPQ    AX, CX
	JGE     scaletail
	VMULPS  (DI)(AX*4), Z0, Z1
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     scale16

scaletail:
	KORTESTW K1, K1
	JZ       scaledone
	VMOVUPS.Z (DI)(AX*4), K1, Z1
	VMULPS    Z1, Z0, Z1
	VMOVUPS   Z1, K1, (DI)(AX*4)

scaledone:
	VZEROUPPER
	RET

// func axpyStrided4AVX512(y *float32, ldy int, a *float32, lda int, v *float32, stride, np, hd int)
// AxpyStrided for four rows at once, rows r < 4 of y (ldy apart) with
// weights a (lda apart) against the same np value rows (stride apart),
// hd a multiple of 16: each row summed exactly as axpyStridedAVX512 sums
// it (per 16 columns: four chains by p mod 4 from y, 0, 0, 0, the last
// np%4 rows into the first, then (c0+c1) + (c2+c3)), the value rows
// loaded once for the four. Row r's chains are Z(4r)..Z(4r+3), the value
// rows Z16..Z19.
TEXT ·axpyStrided4AVX512(SB), NOSPLIT, $0-64
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), DX
	SHLQ $2, DX
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), AX
	SHLQ $2, AX
	LEAQ (AX)(AX*2), R14
	MOVQ v+32(FP), R8
	MOVQ stride+40(FP), BX
	SHLQ $2, BX
	MOVQ np+48(FP), R9
	MOVQ hd+56(FP), CX
	XORQ R10, R10

a4col:
	CMPQ    R10, CX
	JGE     a4done
	LEAQ    (DI)(R10*4), R12
	VMOVUPS (R12), Z0
	ADDQ    DX, R12
	VMOVUPS (R12), Z4
	ADDQ    DX, R12
	VMOVUPS (R12), Z8
	ADDQ    DX, R12
	VMOVUPS (R12), Z12
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	VPXORD  Z9, Z9, Z9
	VPXORD  Z10, Z10, Z10
	VPXORD  Z11, Z11, Z11
	VPXORD  Z13, Z13, Z13
	VPXORD  Z14, Z14, Z14
	VPXORD  Z15, Z15, Z15
	LEAQ    (R8)(R10*4), R11
	MOVQ    R9, R12
	MOVQ    SI, R13

a4p4:
	CMPQ             R12, $4
	JL               a4p1
	VMOVUPS          (R11), Z16
	ADDQ             BX, R11
	VMOVUPS          (R11), Z17
	ADDQ             BX, R11
	VMOVUPS          (R11), Z18
	ADDQ             BX, R11
	VMOVUPS          (R11), Z19
	ADDQ             BX, R11
	VFMADD231PS.BCST (R13), Z16, Z0
	VFMADD231PS.BCST 4(R13), Z17, Z1
	VFMADD231PS.BCST 8(R13), Z18, Z2
	VFMADD231PS.BCST 12(R13), Z19, Z3
	VFMADD231PS.BCST (R13)(AX*1), Z16, Z4
	VFMADD231PS.BCST 4(R13)(AX*1), Z17, Z5
	VFMADD231PS.BCST 8(R13)(AX*1), Z18, Z6
	VFMADD231PS.BCST 12(R13)(AX*1), Z19, Z7
	VFMADD231PS.BCST (R13)(AX*2), Z16, Z8
	VFMADD231PS.BCST 4(R13)(AX*2), Z17, Z9
	VFMADD231PS.BCST 8(R13)(AX*2), Z18, Z10
	VFMADD231PS.BCST 12(R13)(AX*2), Z19, Z11
	VFMADD231PS.BCST (R13)(R14*1), Z16, Z12
	VFMADD231PS.BCST 4(R13)(R14*1), Z17, Z13
	VFMADD231PS.BCST 8(R13)(R14*1), Z18, Z14
	VFMADD231PS.BCST 12(R13)(R14*1), Z19, Z15
	ADDQ             $16, R13
	SUBQ             $4, R12
	JMP              a4p4

a4p1:
	TESTQ            R12, R12
	JZ               a4store
	VMOVUPS          (R11), Z16
	ADDQ             BX, R11
	VFMADD231PS.BCST (R13), Z16, Z0
	VFMADD231PS.BCST (R13)(AX*1), Z16, Z4
	VFMADD231PS.BCST (R13)(AX*2), Z16, Z8
	VFMADD231PS.BCST (R13)(R14*1), Z16, Z12
	ADDQ             $4, R13
	DECQ             R12
	JMP              a4p1

a4store:
	VADDPS  Z1, Z0, Z0
	VADDPS  Z3, Z2, Z2
	VADDPS  Z2, Z0, Z0
	VADDPS  Z5, Z4, Z4
	VADDPS  Z7, Z6, Z6
	VADDPS  Z6, Z4, Z4
	VADDPS  Z9, Z8, Z8
	VADDPS  Z11, Z10, Z10
	VADDPS  Z10, Z8, Z8
	VADDPS  Z13, Z12, Z12
	VADDPS  Z15, Z14, Z14
	VADDPS  Z14, Z12, Z12
	LEAQ    (DI)(R10*4), R12
	VMOVUPS Z0, (R12)
	ADDQ    DX, R12
	VMOVUPS Z4, (R12)
	ADDQ    DX, R12
	VMOVUPS Z8, (R12)
	ADDQ    DX, R12
	VMOVUPS Z12, (R12)
	ADDQ    $16, R10
	JMP     a4col

a4done:
	VZEROUPPER
	RET

// func sumSqAVX512(x *float32, n int) float64
// Σ float64(x[i]·x[i]) (each square rounded to float32, as GGML's
// rms_norm, then summed in float64: four 8-lane accumulators, 32 floats a
// step, then 8 at a time, the last n%8 masked; the lanes summed at the end).
TEXT ·sumSqAVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Z8, Z8, Z8
	VXORPD Z9, Z9, Z9
	VXORPD Z10, Z10, Z10
	VXORPD Z11, Z11, Z11

ss32:
	CMPQ      CX, $32
	JL        ss8
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VMOVUPS   64(SI), Y2
	VMOVUPS   96(SI), Y3
	VMULPS    Y0, Y0, Y0
	VMULPS    Y1, Y1, Y1
	VMULPS    Y2, Y2, Y2
	VMULPS    Y3, Y3, Y3
	VCVTPS2PD Y0, Z0
	VCVTPS2PD Y1, Z1
	VCVTPS2PD Y2, Z2
	VCVTPS2PD Y3, Z3
	VADDPD    Z0, Z8, Z8
	VADDPD    Z1, Z9, Z9
	VADDPD    Z2, Z10, Z10
	VADDPD    Z3, Z11, Z11
	ADDQ      $128, SI
	SUBQ      $32, CX
	JMP       ss32

ss8:
	CMPQ      CX, $8
	JL        sstail
	VMOVUPS   (SI), Y0
	VMULPS    Y0, Y0, Y0
	VCVTPS2PD Y0, Z0
	VADDPD    Z0, Z8, Z8
	ADDQ      $32, SI
	SUBQ      $8, CX
	JMP       ss8

sstail:
	TESTQ       CX, CX
	JZ          sssum
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS.Z   (SI), K1, Y0
	VMULPS      Y0, Y0, Y0
	VCVTPS2PD   Y0, Z0
	VADDPD      Z0, Z9, Z9

sssum:
	VADDPD        Z9, Z8, Z8
	VADDPD        Z11, Z10, Z10
	VADDPD        Z10, Z8, Z8
	VEXTRACTF64X4 $1, Z8, Y1
	VADDPD        Y1, Y8, Y8
	VEXTRACTF128  $1, Y8, X1
	VADDPD        X1, X8, X8
	VPERMILPD     $1, X8, X1
	VADDSD        X1, X8, X8
	MOVSD         X8, ret+16(FP)
	VZEROUPPER
	RET

// func scaleMulAVX512(out, x, w *float32, s float32, n int)
// out[i] = (x[i]·s)·w[i], each product rounded (as the Go expression).
TEXT ·scaleMulAVX512(SB), NOSPLIT, $0-40
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), DX
	VBROADCASTSS s+24(FP), Z0
	MOVQ         n+32(FP), CX
	TAILMASK(BX)
	XORQ         AX, AX

sm16:
	CMPQ    AX, CX
	JGE     smtail
	VMULPS  (SI)(AX*4), Z0, Z1
	VMULPS  (DX)(AX*4), Z1, Z1
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     sm16

smtail:
	KORTESTW  K1, K1
	JZ        smdone
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VMOVUPS.Z (DX)(AX*4), K1, Z2
	VMULPS    Z1, Z0, Z1
	VMULPS    Z2, Z1, Z1
	VMOVUPS   Z1, K1, (DI)(AX*4)

smdone:
	VZEROUPPER
	RET

DATA ropeDup<>+0(SB)/8, $0x0000000000000000
DATA ropeDup<>+8(SB)/8, $0x0000000100000001
DATA ropeDup<>+16(SB)/8, $0x0000000200000002
DATA ropeDup<>+24(SB)/8, $0x0000000300000003
DATA ropeDup<>+32(SB)/8, $0x0000000400000004
DATA ropeDup<>+40(SB)/8, $0x0000000500000005
DATA ropeDup<>+48(SB)/8, $0x0000000600000006
DATA ropeDup<>+56(SB)/8, $0x0000000700000007
GLOBL ropeDup<>(SB), RODATA|NOPTR, $64

// func ropeAVX512(x, cs, sn *float32, h, n int)
// Rotates the pairs (x[2i], x[2i+1]) of every 2h-float segment of x's n
// floats by (cs[i], sn[i]), i < h (h a multiple of 8): a·c − b·s and
// a·s + b·c, each product and the sum rounded on their own (no FMA), as
// the Go loop computes them. 8 pairs (one zmm) a step.
TEXT ·ropeAVX512(SB), NOSPLIT, $0-40
	MOVQ      x+0(FP), DI
	MOVQ      cs+8(FP), SI
	MOVQ      sn+16(FP), DX
	MOVQ      h+24(FP), R8
	MOVQ      n+32(FP), CX
	VMOVDQU32 ropeDup<>(SB), Z7
	MOVL      $0xAAAA, AX
	KMOVW     AX, K2
	SHLQ      $3, R8             // bytes of one segment = 2h·4

ropeseg:
	CMPQ CX, $0
	JLE  ropedone
	XORQ R9, R9                   // byte offset in the segment
	XORQ R10, R10                 // byte offset in cs, sn

ropestep:
	CMPQ      R9, R8
	JGE       ropenext
	VMOVUPS   (DI)(R9*1), Z0
	VPERMILPS $0xB1, Z0, Z1       // b0 a0 b1 a1 …
	VMOVUPS   (SI)(R10*1), Y2
	VMOVUPS   (DX)(R10*1), Y3
	VPERMPS   Z2, Z7, Z2          // c0 c0 c1 c1 …
	VPERMPS   Z3, Z7, Z3          // s0 s0 s1 s1 …
	VMULPS    Z2, Z0, Z4          // a·c, b·c
	VMULPS    Z3, Z1, Z5          // b·s, a·s
	VSUBPS    Z5, Z4, Z6          // a·c − b·s (even lanes)
	VADDPS    Z5, Z4, K2, Z6      // b·c + a·s (odd lanes)
	VMOVUPS   Z6, (DI)(R9*1)
	ADDQ      $64, R9
	ADDQ      $32, R10
	JMP       ropestep

ropenext:
	ADDQ R8, DI
	MOVQ R8, AX
	SHRQ $2, AX
	SUBQ AX, CX
	JMP  ropeseg

ropedone:
	VZEROUPPER
	RET
