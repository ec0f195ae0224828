package tensor

import "fmt"

// Packed Q2_K layout (Mat.P of a Q2_K matrix, made by PackBlocks at a
// level with its kernel: kernels.q2k).
//
// W rows in groups of 16 (the last padded with zero rows); per group g and
// super-block b a record of q2kRecord bytes at P[(g·nb+b)·q2kRecord:]:
//
//	[0, 1024)     the two-bit weights: for half n < 2 and step s < 8, 64
//	              bytes at 512n + 64s whose byte 4r+t is GGML byte
//	              qs[32n+4s+t] of row 16g+r: bits 2j..2j+1 are column
//	              128n + 32j + 4s + t
//	[1024, 1280)  the 16-groups' 4-bit scales, byte 16·grp + r
//	[1280, 1536)  their 4-bit mins in pairs: byte 32k + 2r + u is the min
//	              of 16-group 2k+u of row r (one VPMOVZXBW gives lane k's
//	              word pairs for VPDPWSSD)
//	[1536, 1568)  the 16 rows' float16 d, then [1568, 1600) their dmin
//
// 19% more than the GGML blocks (the scales and mins unpacked to bytes).
// The arithmetic is stepQ2K's and sumLanes' (blockmm.go), bit for bit:
// per super-block and lane k the exact int32 mins' sum
// M_k = mn_2k·bs_2k + mn_2k+1·bs_2k+1 (bs: the Q8_K sums of 16) fused
// first, l_k = fma(−dx·dmin, float32(M_k), l_k), then the exact lane sum
// I_k = Σ sc·q·x over the columns e with e%32/4 = k,
// l_k = fma(dx·d, float32(I_k), l_k); out = ((l0+l4)+(l2+l6)) +
// ((l1+l5)+(l3+l7)) + 0.
const q2kRecord = 1600

// q2kArgs is a packed Q2_K product: n activation rows quantized to Q8_K
// (xq, xd per super-block; bs per super-block eight words pairs of the
// sums of 16) against w.
type q2kArgs struct {
	out      []float32
	ldo      int
	xq       []int8
	xd       []float32
	bs       []uint32
	n        int
	rows, nb int
	w        []byte
}

// packQ2K returns the packed form of the GGML Q2_K rows q.
func packQ2K(q []byte, rows, cols int) []byte {
	return packRecords(q, rows, cols, 84, q2kRecord, func(rec, blk []byte, r int) {
		for n := 0; n < 2; n++ {
			for s := 0; s < 8; s++ {
				copy(rec[512*n+64*s+4*r:512*n+64*s+4*r+4], blk[16+32*n+4*s:])
			}
		}
		for grp := 0; grp < 16; grp++ {
			rec[1024+16*grp+r] = blk[grp] & 15
			rec[1280+32*(grp/2)+2*r+grp%2] = blk[grp] >> 4
		}
		copy(rec[1536+2*r:1536+2*r+2], blk[80:82])
		copy(rec[1568+2*r:1568+2*r+2], blk[82:84])
	})
}

// unpackQ2KP returns the GGML Q2_K rows of a packed matrix (the inverse of
// packQ2K).
func unpackQ2KP(p []byte, rows, cols int) []byte {
	nb := cols / 256
	q := make([]byte, rows*nb*84)
	for row := 0; row < rows; row++ {
		g, r := row/q8Group, row%q8Group
		for b := 0; b < nb; b++ {
			blk := q[(row*nb+b)*84 : (row*nb+b+1)*84]
			rec := p[(g*nb+b)*q2kRecord : (g*nb+b+1)*q2kRecord]
			for n := 0; n < 2; n++ {
				for s := 0; s < 8; s++ {
					copy(blk[16+32*n+4*s:16+32*n+4*s+4], rec[512*n+64*s+4*r:])
				}
			}
			for grp := 0; grp < 16; grp++ {
				blk[grp] = rec[1024+16*grp+r] | rec[1280+32*(grp/2)+2*r+grp%2]<<4
			}
			copy(blk[80:82], rec[1536+2*r:])
			copy(blk[82:84], rec[1568+2*r:])
		}
	}
	return q
}

// matMulQ2KP is MatMul for a packed Q2_K matrix: the activations quantized
// to Q8_K, their sums of 16 paired into words, the groups split over the
// pool's threads.
func (p *Pool) matMulQ2KP(out, x []float32, n int, w *Mat) {
	nb, ng := w.Cols/256, (w.Rows+q8Group-1)/q8Group
	if w.Cols%256 != 0 || len(w.P) < kpPackedBytes(w.Rows, w.Cols, q2kRecord) {
		panic(fmt.Sprintf("tensor: MatMul: packed Q2_K weights of %d bytes do not fit %d×%d", len(w.P), w.Rows, w.Cols))
	}
	if impl.q2k == nil { // packed at another level: the GGML blocks again
		u := &Mat{Rows: w.Rows, Cols: w.Cols, Type: Q2_K, Q: unpackQ2KP(w.P, w.Rows, w.Cols)}
		p.matMulBlocks(out, x, n, u, CodecOf(Q2_K))
		return
	}
	a := p.quantizeAct(CodecOf(Q2_K), x, n, w.Cols)
	bs := make([]uint32, len(a.bsum)/2)
	for k := range bs { // |Σ of 16 int8| ≤ 2032: a word each
		bs[k] = uint32(uint16(a.bsum[2*k])) | uint32(uint16(a.bsum[2*k+1]))<<16
	}
	args := &q2kArgs{out: out, ldo: w.Rows, xq: a.q, xd: a.d, bs: bs, n: n, rows: w.Rows, nb: nb, w: w.P}
	fn := func(lo, hi int) { impl.q2k(args, lo, hi) }
	p.run(n*w.Rows*w.Cols, ng, fn, fn)
}

// groupMask returns the valid-row bits of group g.
func (a *q2kArgs) groupMask(g int) uint64 {
	return uint64(1)<<min(q8Group, a.rows-g*q8Group) - 1
}
