package tensor

// Packed Q6_K layout (Mat.P of a Q6_K matrix, made by PackBlocks at a
// level with Q6_K kernels).
//
// W rows in groups of 16 (the last padded with zero rows); per group g and
// super-block b a record of q6kRecord bytes (the GGML blocks' size) at
// P[(g·nb+b)·q6kRecord:]: for half h < 2 and lane k < 8, 192 bytes at
// 1536h + 192k: the 16 rows' GGML bytes ql[64h+4k+t] (64 bytes, byte 4r+t
// of row r), ql[64h+32+4k+t], then qh[32h+4k+t]; at 3072 the int8 scales,
// byte 16s+r of sub-block s (16 values), row r; at 3328 the rows' float16
// d. The three zmm of a lane hold its four steps of the half (columns
// 128h+32j+4k+t, j < 4: the low nibbles of the first and second ql zmm,
// then their high nibbles, each with the qh bit pair 2j, 2j+1) for 16
// rows, the weights q+32 as unsigned bytes for VPDPBUSD, started from the
// step's −32·Σx. The arithmetic is stepLanes's (blockmm.go) bit for bit:
// per super-block each lane's exact int32 I = Σ sc·Σ(q−32)·x, fused into
// the lane's float sum with d·dx; the lanes reduced as sumLanes.
const q6kRecord = 16 * 210

// packQ6K returns the packed form of the GGML Q6_K rows q.
func packQ6K(q []byte, rows, cols int) []byte {
	nb := cols / 256
	p := alignedBytes((rows+q8Group-1)/q8Group*nb*q6kRecord, 64)
	rb := nb * 210
	for row := 0; row < rows; row++ {
		g, r := row/q8Group, row%q8Group
		for b := 0; b < nb; b++ {
			blk := q[row*rb+b*210 : row*rb+(b+1)*210]
			rec := p[(g*nb+b)*q6kRecord : (g*nb+b+1)*q6kRecord]
			for h := 0; h < 2; h++ {
				for k := 0; k < 8; k++ {
					o := 1536*h + 192*k + 4*r
					copy(rec[o:o+4], blk[64*h+4*k:])
					copy(rec[o+64:o+68], blk[64*h+32+4*k:])
					copy(rec[o+128:o+132], blk[128+32*h+4*k:])
				}
			}
			for s := 0; s < 16; s++ {
				rec[3072+16*s+r] = blk[192+s]
			}
			copy(rec[3328+2*r:], blk[208:210])
		}
	}
	return p
}

// matMulQ6KPacked is MatMul for a packed Q6_K matrix.
func (p *Pool) matMulQ6KPacked(out, x []float32, n int, w *Mat) {
	nb := w.Cols / 256
	if w.Cols%256 != 0 || len(w.P) < (w.Rows+q8Group-1)/q8Group*nb*q6kRecord {
		panic("tensor: MatMul: packed Q6_K weights do not fit the matrix")
	}
	a := quantizeAct(CodecOf(Q6_K), x, n, w.Cols)
	xc := make([]int32, n*w.Cols/4)
	q8lCorr(xc, a.q)
	for k := range xc {
		xc[k] /= 4 // −32·Σ: exact (a multiple of 128)
	}
	args := &kpArgs{out: out, ldo: w.Rows, xq: a.q, xd: a.d, aux: xc, n: n, rows: w.Rows, nb: nb, w: w.P}
	f := impl.q6k
	fn := func(lo, hi int) { f(args, lo, hi) }
	p.run(n*w.Rows*w.Cols, (w.Rows+q8Group-1)/q8Group, fn, fn)
}
