package tensor

import "fmt"

// Packed Q4_K layout (Mat.P of a Q4_K matrix, made by PackQ4K at a level
// with Q4_K kernels).
//
// W rows in groups of 16 (the last padded with zero rows); per group g and
// super-block b a record of q4kRecord bytes at P[(g·nb+b)·q4kRecord:]:
//
//	[0, 2048)     the nibbles: for sub-block pair p < 4 and step k < 8, 64
//	              bytes at 512p + 64k whose byte 4r+t is the GGML byte
//	              qs[32p+4k+t] of row 16g+r: low nibble column 64p+4k+t,
//	              high nibble column 64p+32+4k+t
//	[2048, 2080)  the 16 rows' float16 d, then [2080, 2112) their dmin
//	[2112, 2240)  the 6-bit scales, byte 16s+r of sub-block s, row r
//	[2240, 2368)  the 6-bit mins, the same way
//
// 2.8% more than the GGML blocks. One zmm load holds a step of two sub-blocks
// for 16 rows (masked with 0x0F, and shifted), for VPDPBUSD against four
// broadcast activation bytes. The arithmetic is stepQ4K's (blockmm.go), bit
// for bit: per pair of sub-blocks the exact int32 I = sc_2p·D_2p +
// sc_2p+1·D_2p+1 and M = mn_2p·bs_2p + mn_2p+1·bs_2p+1 (bs: the Q8_K sums of
// 32), s = fma(float32(I), d·dx, s), m = fma(float32(M), dmin·dx, m),
// out = s − m.
const q4kRecord = 2048 + 64 + 256

// kpArgs is a packed K-format product: n activation rows quantized to
// Q8_K (xq, xd per super-block, and aux: for Q4_K the sums of each 32, for
// Q6_K per four values −32·Σ) against w (packed).
type kpArgs struct {
	out      []float32
	ldo      int
	xq       []int8
	xd       []float32
	aux      []int32
	n        int
	rows, nb int
	w        []byte
}

// kpPackedBytes is the size of the packed form of a rows×cols matrix in
// groups of 16 rows with a record of rec bytes per group and super-block
// (packRecords' layout).
func kpPackedBytes(rows, cols, rec int) int {
	return (rows + q8Group - 1) / q8Group * (cols / 256) * rec
}

// PackBlocks repacks a matrix of a block format in place for its level's
// kernels, where the level has them (Q3_K, Q4_K, Q5_K and Q6_K at avx512:
// w.P gets the packed layout, w.Q is released). It does nothing to other matrices.
func PackBlocks(w *Mat) {
	if packB32(w) { // Q4_1, Q5_0, Q5_1, IQ4_NL: b32pack.go
		return
	}
	var pack func(q []byte, rows, cols int) []byte
	switch {
	case w.P != nil:
	case w.Type == Q4_K && impl.q4k != nil:
		pack = packQ4K
	case w.Type == Q6_K && impl.q6k != nil:
		pack = packQ6K
	case w.Type == Q5_K && impl.q5k != nil:
		pack = packQ5K
	case w.Type == Q3_K && impl.q3k != nil:
		pack = packQ3K
	}
	if pack == nil {
		return
	}
	if err := CodecOf(w.Type).Check(w.Q, w.Rows, w.Cols); err != nil {
		panic("tensor: PackBlocks: " + err.Error())
	}
	w.P = pack(w.Q, w.Rows, w.Cols)
	w.Q = nil
}

// packRecords lays the GGML K blocks of q (rows×cols, bb bytes each) out
// in groups of 16 rows, a record of rec bytes per group and super-block
// (zero for padding rows): fill writes row r's block blk into its group's
// record.
func packRecords(q []byte, rows, cols, bb, rec int, fill func(rec, blk []byte, r int)) []byte {
	nb := cols / 256
	p := alignedBytes(kpPackedBytes(rows, cols, rec), 64)
	for row := 0; row < rows; row++ {
		g := row / q8Group
		for b := 0; b < nb; b++ {
			blk := q[(row*nb+b)*bb : (row*nb+b+1)*bb]
			fill(p[(g*nb+b)*rec:(g*nb+b+1)*rec], blk, row%q8Group)
		}
	}
	return p
}

// packQ4K returns the packed form of the GGML Q4_K rows q.
func packQ4K(q []byte, rows, cols int) []byte {
	return packRecords(q, rows, cols, 144, q4kRecord, func(rec, blk []byte, r int) {
		for pp := 0; pp < 4; pp++ {
			for k := 0; k < 8; k++ {
				copy(rec[512*pp+64*k+4*r:512*pp+64*k+4*r+4], blk[16+32*pp+4*k:])
			}
		}
		copy(rec[2048+2*r:], blk[0:2])
		copy(rec[2080+2*r:], blk[2:4])
		for s := 0; s < 8; s++ {
			sc, m := q4KScaleMin(s, blk[4:16])
			rec[2112+16*s+r], rec[2240+16*s+r] = sc, m
		}
	})
}

// kpRecord is the packed record size per group and super-block of the
// K formats PackBlocks packs.
var kpRecord = map[DType]int{Q3_K: q3kRecord, Q4_K: q4kRecord, Q5_K: q5kRecord, Q6_K: q6kRecord}

// matMulKPacked is MatMul for a packed Q3_K, Q4_K, Q5_K or Q6_K matrix:
// the activations quantized to Q8_K with the kernel's aux (Q4_K, Q5_K: the
// sums of each 32; Q3_K, Q6_K: per four values −4·Σ, −32·Σ), the groups
// split over the pool's threads.
func (p *Pool) matMulKPacked(out, x []float32, n int, w *Mat) {
	nb := w.Cols / 256
	if w.Cols%256 != 0 || len(w.P) < kpPackedBytes(w.Rows, w.Cols, kpRecord[w.Type]) {
		panic(fmt.Sprintf("tensor: MatMul: packed %s weights of %d bytes do not fit %d×%d", CodecOf(w.Type).Name, len(w.P), w.Rows, w.Cols))
	}
	a := p.quantizeAct(CodecOf(w.Type), x, n, w.Cols)
	var aux []int32
	f := impl.q4k
	switch w.Type {
	case Q3_K, Q6_K: // per four values −4·Σ (Q3_K) or −32·Σ (Q6_K)
		mul := int32(-4)
		f = impl.q3k
		if w.Type == Q6_K {
			f, mul = impl.q6k, -32
		}
		aux = p.scratch32(n * w.Cols / 4)
		for k := range aux {
			q := a.q[4*k : 4*k+4 : 4*k+4]
			aux[k] = mul * (int32(q[0]) + int32(q[1]) + int32(q[2]) + int32(q[3]))
		}
	default:
		if w.Type == Q5_K {
			f = impl.q5k
		}
		aux = p.scratch32(len(a.bsum) / 2)
		for k := range aux {
			aux[k] = a.bsum[2*k] + a.bsum[2*k+1]
		}
	}
	args := &kpArgs{out: out, ldo: w.Rows, xq: a.q, xd: a.d, aux: aux, n: n, rows: w.Rows, nb: nb, w: w.P}
	fn := func(lo, hi int) { f(args, lo, hi) }
	p.run(n*w.Rows*w.Cols, (w.Rows+q8Group-1)/q8Group, fn, fn)
}

// groupMask returns the valid-row bits of group g.
func (a *kpArgs) groupMask(g int) uint64 {
	return uint64(1)<<min(q8Group, a.rows-g*q8Group) - 1
}
