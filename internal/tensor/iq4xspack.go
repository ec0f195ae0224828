package tensor

import "fmt"

// Packed IQ4_XS layout (Mat.P of an IQ4_XS matrix, made by PackBlocks at
// a level with its kernel: kernels.iq4xs).
//
// W rows in groups of 16 (the last padded with zero rows); per group g and
// super-block b a record of iq4xsRecord bytes at P[(g·nb+b)·iq4xsRecord:]:
//
//	[0, 2048)     per sub-block ib < 8 of 32 columns, 256 bytes in the
//	              nibble layout of the 32-element formats (b32pack.go):
//	              byte 256·ib + 64·k4 + 4r + t is GGML byte qs[16·ib+4·k4+t]
//	              of row 16g+r
//	[2048, 2176)  the sub-block scales ls−32 as int8, byte 16·ib + r
//	[2176, 2208)  the 16 rows' float16 d
//	[2208, 2240)  zero (records stay 64-byte aligned)
//
// 1.5% more than the GGML blocks. The arithmetic is stepLanes' and
// sumLanes' (blockmm.go), bit for bit: per super-block the exact int32
// lane sums I_k = Σ_ib sc_ib·Σ q·x over the columns e with e%32/4 = k (the
// table values made unsigned, +128, and each four-column step's sum
// started at the activation's −128·Σx), l_k = fma(d·dx, float32(I_k),
// l_k), out = ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) + 0.
const iq4xsRecord = 2240

// xsArgs is a packed IQ4_XS product: n activation rows quantized to Q8_K
// (xq, xd per super-block; xc per four values −128·Σ) against w.
type xsArgs struct {
	out      []float32
	ldo      int
	xq       []int8
	xd       []float32
	xc       []int32
	n        int
	rows, nb int
	w        []byte
}

// packIQ4XS returns the packed form of the GGML IQ4_XS rows q.
func packIQ4XS(q []byte, rows, cols int) []byte {
	return packRecords(q, rows, cols, 136, iq4xsRecord, func(rec, blk []byte, r int) {
		var u unpacked
		unpackIQ4XS(&u, blk)
		for ib := 0; ib < 8; ib++ {
			for k4 := 0; k4 < 4; k4++ {
				copy(rec[256*ib+64*k4+4*r:256*ib+64*k4+4*r+4], blk[8+16*ib+4*k4:])
			}
			rec[2048+16*ib+r] = byte(int8(u.sc[2*ib]))
		}
		copy(rec[2176+2*r:2176+2*r+2], blk[0:2])
	})
}

// unpackIQ4XSP returns the GGML IQ4_XS rows of a packed matrix (the
// inverse of packIQ4XS).
func unpackIQ4XSP(p []byte, rows, cols int) []byte {
	nb := cols / 256
	q := make([]byte, rows*nb*136)
	for row := 0; row < rows; row++ {
		g, r := row/q8Group, row%q8Group
		for b := 0; b < nb; b++ {
			blk := q[(row*nb+b)*136 : (row*nb+b+1)*136]
			rec := p[(g*nb+b)*iq4xsRecord : (g*nb+b+1)*iq4xsRecord]
			copy(blk[0:2], rec[2176+2*r:])
			var sh uint16
			for ib := 0; ib < 8; ib++ {
				for k4 := 0; k4 < 4; k4++ {
					copy(blk[8+16*ib+4*k4:8+16*ib+4*k4+4], rec[256*ib+64*k4+4*r:])
				}
				ls := byte(int8(rec[2048+16*ib+r]) + 32)
				blk[4+ib/2] |= ls & 15 << (4 * (ib % 2))
				sh |= uint16(ls>>4) << (2 * ib)
			}
			blk[2], blk[3] = byte(sh), byte(sh>>8)
		}
	}
	return q
}

// matMulIQ4XSP is MatMul for a packed IQ4_XS matrix: the activations
// quantized to Q8_K with their step corrections, the groups split over the
// pool's threads.
func (p *Pool) matMulIQ4XSP(out, x []float32, n int, w *Mat) {
	nb, ng := w.Cols/256, (w.Rows+q8Group-1)/q8Group
	if w.Cols%256 != 0 || len(w.P) < kpPackedBytes(w.Rows, w.Cols, iq4xsRecord) {
		panic(fmt.Sprintf("tensor: MatMul: packed IQ4_XS weights of %d bytes do not fit %d×%d", len(w.P), w.Rows, w.Cols))
	}
	if impl.iq4xs == nil { // packed at another level: the GGML blocks again
		u := &Mat{Rows: w.Rows, Cols: w.Cols, Type: IQ4_XS, Q: unpackIQ4XSP(w.P, w.Rows, w.Cols)}
		p.matMulBlocks(out, x, n, u, CodecOf(IQ4_XS))
		return
	}
	a := p.quantizeAct(CodecOf(IQ4_XS), x, n, w.Cols)
	xc := p.scratch32(n * w.Cols / 4)
	q8lCorr(xc, a.q)
	args := &xsArgs{out: out, ldo: w.Rows, xq: a.q, xd: a.d, xc: xc, n: n, rows: w.Rows, nb: nb, w: w.P}
	fn := func(lo, hi int) { impl.iq4xs(args, lo, hi) }
	p.run(n*w.Rows*w.Cols, ng, fn, fn)
}

// groupMask returns the valid-row bits of group g.
func (a *xsArgs) groupMask(g int) uint64 {
	return uint64(1)<<min(q8Group, a.rows-g*q8Group) - 1
}
