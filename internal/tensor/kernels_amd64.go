//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func dotAVX2(a, b *float32, k int) float32

//go:noescape
func q4kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32

//go:noescape
func iq4xsRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32

//go:noescape
func q4_1RowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32

//go:noescape
func q5_0RowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32

//go:noescape
func q5_1RowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32

//go:noescape
func iq4nlRowAVX2(blk *byte, x *int8, xd, xs *float32, nb int) float32

//go:noescape
func q2kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32

//go:noescape
func q3kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32

//go:noescape
func q5kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32

//go:noescape
func q6kRowAVX2(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32

// kRowsAVX2 are the avx2 and avx512 levels' one-output dot products on
// GGML blocks (blockmm.go's kRow).
var kRowsAVX2 = map[DType]blockDot{
	Q2_K:   kDot(84, q2kRowAVX2),
	Q3_K:   kDot(110, q3kRowAVX2),
	Q4_K:   kDot(144, q4kRowAVX2),
	Q5_K:   kDot(176, q5kRowAVX2),
	Q6_K:   kDot(210, q6kRowAVX2),
	IQ4_XS: kDot(136, iq4xsRowAVX2),
	Q4_1:   bDot(20, q4_1RowAVX2),
	Q5_0:   bDot(22, q5_0RowAVX2),
	Q5_1:   bDot(24, q5_1RowAVX2),
	IQ4_NL: bDot(18, iq4nlRowAVX2),
}

// kDot wraps a K-format kernel (super-blocks of bb bytes, Q8_K
// activations).
func kDot(bb int, k func(blk *byte, x *int8, bsum *int32, xd *float32, nb int) float32) blockDot {
	return func(blk []byte, xq []int8, bsum []int32, xd, _ []float32, nb int) float32 {
		_, _, _, _ = blk[nb*bb-1], xq[nb*256-1], bsum[nb*16-1], xd[nb-1]
		return k(&blk[0], &xq[0], &bsum[0], &xd[0], nb)
	}
}

// bDot wraps a 32-block kernel (blocks of bb bytes; xs, the Q8_1 sums, is
// nil for Q8_0 activations and then not read).
func bDot(bb int, k func(blk *byte, x *int8, xd, xs *float32, nb int) float32) blockDot {
	return func(blk []byte, xq []int8, _ []int32, xd, xs []float32, nb int) float32 {
		_, _, _ = blk[nb*bb-1], xq[nb*32-1], xd[nb-1]
		var ps *float32
		if xs != nil {
			_ = xs[nb-1]
			ps = &xs[0]
		}
		return k(&blk[0], &xq[0], &xd[0], ps, nb)
	}
}

//go:noescape
func axpyAVX2(y *float32, alpha float32, x *float32, k int)

//go:noescape
func dot1AVX2(x, w *float32, k int) float32

//go:noescape
func mv4AVX2(out, x, w *float32, ldw, k int)

//go:noescape
func mv8AVX2(out, x, w *float32, ldw, k int)

//go:noescape
func gemm4x3AVX2(out *float32, ldo int, x *float32, ldx int, w *float32, ldw int, k int)

//go:noescape
func q8dot4AVX2(out *float32, xq *int8, xd *float32, w *byte, ldw, nb int)

//go:noescape
func dotAVX512(a, b *float32, k int) float32

//go:noescape
func axpyAVX512(y *float32, alpha float32, x *float32, k int)

//go:noescape
func scaleAVX512(x *float32, s float32, k int)

//go:noescape
func sumSqAVX512(x *float32, n int) float64

//go:noescape
func ropeAVX512(x, cs, sn *float32, h, n int)

//go:noescape
func scaleMulAVX512(out, x, w *float32, s float32, n int)

//go:noescape
func axpyStrided4AVX512(y *float32, ldy int, a *float32, lda int, v *float32, stride, np, hd int)

//go:noescape
func scoresAVX512(out *float32, ldo int, q *float32, ldq, rows int, k *float32, ldk, keys, hd int, scale float32)

//go:noescape
func axpyBlocksAVX512(y *float32, ldy int, a *float32, lda int, v *float32, bt *int32, nb, blk, stride, bs, hd, groups int)

//go:noescape
func dot1AVX512(x, w *float32, k int) float32

//go:noescape
func mv4AVX512(out, x, w *float32, ldw, k int)

//go:noescape
func mv8AVX512(out, x, w *float32, ldw, k int)

//go:noescape
func gemm4x6AVX512(out *float32, ldo int, xp *float32, w *float32, ldw int, k int, acc *float32, flags int, pf *float32, ntiles int)

//go:noescape
func packx4AVX512(dst, x *float32, ldx, kb, tiles int)

//go:noescape
func q8dot4VNNI(out *float32, xq *int8, xd *float32, w *byte, ldw, nb int)

//go:noescape
func q8gemm4x4VNNI(out *float32, ldo int, xu *byte, ldx int, xd *float32, ldd int, w *byte, ldw, nb int)

//go:noescape
func quantizeAVX512(q *int8, d *float32, x *float32, nb int)

//go:noescape
func quantizeQ4AVX512(dst *byte, x *float32, nb int)

//go:noescape
func softmaxAVX512(x *float32, n int)

//go:noescape
func swigluAVX512(gate, up *float32, n int)

//go:noescape
func axpyStridedAVX512(y, a, v *float32, stride, np, hd int)

// avx512Kernels handle any column count (masked tails), so vl is 1.
var avx512Kernels = &kernels{
	name: "avx512", vl: 1, mr: 4, nr: 6, kRow: kRowsAVX2,
	dot: func(a, b []float32, k int) float32 {
		_, _ = a[k-1], b[k-1]
		return dotAVX512(&a[0], &b[0], k)
	},
	axpy: func(y []float32, alpha float32, x []float32, k int) {
		_, _ = y[k-1], x[k-1]
		axpyAVX512(&y[0], alpha, &x[0], k)
	},
	dot1: func(x, w []float32, k int) float32 {
		if k == 0 {
			return 0
		}
		_, _ = x[k-1], w[k-1]
		return dot1AVX512(&x[0], &w[0], k)
	},
	mv4: func(out, x, w []float32, ldw, k int) {
		_ = out[3]
		if k == 0 {
			clear(out[:4])
			return
		}
		_, _ = x[k-1], w[3*ldw+k-1]
		mv4AVX512(&out[0], &x[0], &w[0], ldw, k)
	},
	mv8: func(out, x, w []float32, ldw, k int) {
		_ = out[7]
		if k == 0 {
			clear(out[:8])
			return
		}
		_, _ = x[k-1], w[7*ldw+k-1]
		mv8AVX512(&out[0], &x[0], &w[0], ldw, k)
	},
	packX: func(dst, x []float32, ldx, tiles, kb int) {
		if tiles <= 0 || kb <= 0 {
			return
		}
		_, _ = dst[tiles*((kb+15)/16)*64-1], x[(4*tiles-1)*ldx+kb-1]
		packx4AVX512(&dst[0], &x[0], ldx, kb, tiles)
	},
	gemmBlk: func(out []float32, ldo int, xp []float32, w []float32, ldw, k int, acc []float32, flags int, pf []float32, tiles int) {
		if tiles <= 0 || k <= 0 {
			panic("tensor: gemmBlk: no tiles or columns")
		}
		_, _, _ = xp[tiles*((k+15)/16)*64-1], w[5*ldw+k-1], pf[5*ldw+k-1]
		if flags&gemmFinal != 0 {
			_ = out[(4*tiles-1)*ldo+5]
		} else if k%16 != 0 {
			panic("tensor: gemmBlk: a non-final block needs k%16 == 0")
		}
		var a *float32
		if flags&(gemmLoad|gemmFinal) != gemmFinal {
			_ = acc[tiles*4*6*16-1]
			a = &acc[0]
		}
		var o *float32
		if flags&gemmFinal != 0 {
			o = &out[0]
		}
		gemm4x6AVX512(o, ldo, &xp[0], &w[0], ldw, k, a, flags, &pf[0], tiles)
	},
	q8dot4: func(out []float32, xq []int8, xd []float32, w []byte, ldw, nb int) {
		_, _, _, _ = out[3], xq[nb*Q8BlockSize-1], xd[nb-1], w[3*ldw+nb*Q8BlockBytes-1]
		q8dot4VNNI(&out[0], &xq[0], &xd[0], &w[0], ldw, nb)
	},
	q8gemm: func(out []float32, ldo int, xu []byte, ldx int, xd []float32, ldd int, w []byte, ldw, nb int) {
		_, _, _ = out[3*ldo+3], xu[3*ldx+nb*Q8BlockSize-1], xd[3*ldd+nb-1]
		_ = w[3*ldw+nb*Q8BlockBytes-1]
		q8gemm4x4VNNI(&out[0], ldo, &xu[0], ldx, &xd[0], ldd, &w[0], ldw, nb)
	},
	quantize: func(q []int8, d []float32, x []float32) {
		nb := len(d)
		if nb == 0 {
			return
		}
		_, _ = q[nb*Q8BlockSize-1], x[nb*Q8BlockSize-1]
		quantizeAVX512(&q[0], &d[0], &x[0], nb)
	},
	quantizeQ4: func(dst []byte, x []float32) {
		nb := len(x) / Q8BlockSize
		_ = dst[nb*Q4BlockBytes-1]
		quantizeQ4AVX512(&dst[0], &x[0], nb)
	},
	quantizeQ8K: quantizeQ8KAVX512,
	q8p:         q8pRowsAVX512, q4p: true, q4k: q4kTiledAVX512, q3k: q3kTiledAVX512, q5k: q5kTiledAVX512, q6k: q6kTiledAVX512,
	b32p: b32pRowsAVX512, iq4xs: iq4xsRowsAVX512, q2k: q2kRowsAVX512,
	q8ps: func(xs []uint32, xq []int8, xd []float32) {
		nb := len(xd)
		if nb == 0 {
			return
		}
		_, _ = xs[2*nb-1], xq[nb*Q8BlockSize-1]
		q8pScalesAVX512(&xs[0], &xq[0], &xd[0], nb)
	},
	softmax: func(x []float32) { softmaxAVX512(&x[0], len(x)) },
	axpyStrided: func(y, a, v []float32, stride int) {
		_ = v[(len(a)-1)*stride+len(y)-1]
		axpyStridedAVX512(&y[0], &a[0], &v[0], stride, len(a), len(y))
	},
	swiglu: func(gate, up []float32) {
		_ = up[len(gate)-1]
		swigluAVX512(&gate[0], &up[0], len(gate))
	},
	f32p: f32pAVX512, f32pPack: f32pPackX,
	scale:        func(x []float32, s float32) { scaleAVX512(&x[0], s, len(x)) },
	axpyStrided4: axpyStrided4AVX512,
	scores:       scoresAVX512,
	axpyBlocks:   axpyBlocksAVX512,
	sumSq:        func(x []float32) float64 { return sumSqAVX512(&x[0], len(x)) },
	rope: func(x, cs, sn []float32) {
		h := len(cs)
		_ = sn[h-1]
		ropeAVX512(&x[0], &cs[0], &sn[0], h, len(x))
	},
	scaleMul: func(out, x, w []float32, s float32) {
		_, _ = x[len(out)-1], w[len(out)-1]
		scaleMulAVX512(&out[0], &x[0], &w[0], s, len(out))
	},
}

var avx2Kernels = &kernels{
	name: "avx2", vl: 8, mr: 4, nr: 3, kRow: kRowsAVX2,
	dot: func(a, b []float32, k int) float32 {
		_, _ = a[k-1], b[k-1]
		return dotAVX2(&a[0], &b[0], k)
	},
	axpy: func(y []float32, alpha float32, x []float32, k int) {
		_, _ = y[k-1], x[k-1]
		axpyAVX2(&y[0], alpha, &x[0], k)
	},
	dot1: func(x, w []float32, k int) float32 {
		if k == 0 {
			return 0
		}
		_, _ = x[k-1], w[k-1]
		return dot1AVX2(&x[0], &w[0], k)
	},
	mv4: func(out, x, w []float32, ldw, k int) {
		_ = out[3]
		if k == 0 {
			clear(out[:4])
			return
		}
		_, _ = x[k-1], w[3*ldw+k-1]
		mv4AVX2(&out[0], &x[0], &w[0], ldw, k)
	},
	mv8: func(out, x, w []float32, ldw, k int) {
		_ = out[7]
		if k == 0 {
			clear(out[:8])
			return
		}
		_, _ = x[k-1], w[7*ldw+k-1]
		mv8AVX2(&out[0], &x[0], &w[0], ldw, k)
	},
	gemm: func(out []float32, ldo int, x []float32, ldx int, w []float32, ldw, k int) {
		_ = out[3*ldo+2]
		if k == 0 {
			for i := 0; i < 4; i++ {
				clear(out[i*ldo : i*ldo+3])
			}
			return
		}
		_, _ = x[3*ldx+k-1], w[2*ldw+k-1]
		gemm4x3AVX2(&out[0], ldo, &x[0], ldx, &w[0], ldw, k)
	},
	q8dot4: func(out []float32, xq []int8, xd []float32, w []byte, ldw, nb int) {
		_, _, _, _ = out[3], xq[nb*Q8BlockSize-1], xd[nb-1], w[3*ldw+nb*Q8BlockBytes-1]
		q8dot4AVX2(&out[0], &xq[0], &xd[0], &w[0], ldw, nb)
	},
	quantize: quantizeRow,
	softmax:  softmaxGo, swiglu: swigluGo,
}

// avx512NoVBMIKernels is the avx512 level for CPUs without AVX512_VBMI
// (Cascade Lake and Cooper Lake have VNNI but not VBMI): the packed Q4_0
// kernels, whose VPMULTISHIFTQB is VBMI, are off (q4p), so PackQ4 expands
// Q4_0 matrices to Q8_0 (the same results); so are the packed Q4_1, Q5_0,
// Q5_1, IQ4_NL, IQ4_XS and Q2_K kernels (VPMULTISHIFTQB too), whose
// matrices then stay in GGML blocks.
var avx512NoVBMIKernels = func() *kernels {
	k := *avx512Kernels
	k.q4p, k.b32p, k.iq4xs, k.q2k = false, nil, nil, nil
	return &k
}()

// archImpls lists the SIMD levels this CPU can run, slowest first.
func archImpls() []*kernels {
	return x86Levels(x86Features{
		avx2: cpu.X86.HasAVX2, fma: cpu.X86.HasFMA, f16c: cpu.X86.HasF16C,
		avx512f: cpu.X86.HasAVX512F, avx512vl: cpu.X86.HasAVX512VL, avx512bw: cpu.X86.HasAVX512BW,
		avx512dq: cpu.X86.HasAVX512DQ, avx512vnni: cpu.X86.HasAVX512VNNI, avx512vbmi: cpu.X86.HasAVX512VBMI,
	})
}

// x86Features are the CPU features the levels need.
type x86Features struct {
	avx2, fma, f16c                                               bool
	avx512f, avx512vl, avx512bw, avx512dq, avx512vnni, avx512vbmi bool
}

// x86Levels lists the levels a CPU with features f can run, slowest first:
// avx2 needs AVX2, FMA and F16C; avx512 needs AVX-512 F, VL, BW, DQ (the
// zmm VXORPS/VXORPD) and VNNI, and its packed Q4_0 kernels also VBMI.
func x86Levels(f x86Features) []*kernels {
	if !f.avx2 || !f.fma || !f.f16c {
		return nil
	}
	l := []*kernels{avx2Kernels}
	if f.avx512f && f.avx512vl && f.avx512bw && f.avx512dq && f.avx512vnni {
		if f.avx512vbmi {
			l = append(l, avx512Kernels)
		} else {
			l = append(l, avx512NoVBMIKernels)
		}
	}
	return l
}

//go:noescape
func q8kBlockAVX512(q *int8, bsum *int32, x *float32) (d float32, ok bool)

// quantizeQ8KAVX512 is quantizeQ8K with q8kquant_amd64.s, which leaves
// the blocks whose largest magnitude is not finite or below 2^-120 to it.
func quantizeQ8KAVX512(q []int8, bsum []int32, x []float32) float32 {
	_, _, _ = q[255], bsum[15], x[255]
	if d, ok := q8kBlockAVX512(&q[0], &bsum[0], &x[0]); ok {
		return d
	}
	return quantizeQ8K(q, bsum, x)
}
