package tensor

// Packed Q5_K layout (Mat.P of a Q5_K matrix, made by PackBlocks at a
// level with Q5_K kernels).
//
// W rows in groups of 16 (the last padded with zero rows); per group g and
// super-block b a record of q5kRecord bytes at P[(g·nb+b)·q5kRecord:]:
//
//	[0, 2048)     the nibbles, as packed Q4_K's (q4kpack.go)
//	[2048, 2560)  for lane k < 8, 64 bytes at 2048 + 64k: byte 4r+t is the
//	              GGML byte qh[4k+t] of row r (bit 2p: the fifth bit of
//	              column 64p+4k+t, bit 2p+1: of column 64p+32+4k+t)
//	[2560, 2624)  the 16 rows' float16 d, then their dmin
//	[2624, 2880)  the 6-bit scales, then the mins, byte 16s+r of
//	              sub-block s, row r
//
// 2.3% more than the GGML blocks. The arithmetic is stepQ5K's (blockmm.go)
// bit for bit: per super-block each lane's exact int32 sum of sc·q·x fused
// into the lane's float sum with d·dx; the mins' exact Σ mn·bs, times
// −(dmin·dx) (the product rounded), added to s; the lanes reduced with s
// as sumLanes.
const q5kRecord = 2880

// packQ5K returns the packed form of the GGML Q5_K rows q.
func packQ5K(q []byte, rows, cols int) []byte {
	return packRecords(q, rows, cols, 176, q5kRecord, func(rec, blk []byte, r int) {
		for k := 0; k < 8; k++ {
			for pp := 0; pp < 4; pp++ {
				copy(rec[512*pp+64*k+4*r:512*pp+64*k+4*r+4], blk[48+32*pp+4*k:])
			}
			copy(rec[2048+64*k+4*r:2048+64*k+4*r+4], blk[16+4*k:])
		}
		copy(rec[2560+2*r:], blk[0:2])
		copy(rec[2592+2*r:], blk[2:4])
		for s := 0; s < 8; s++ {
			sc, m := q4KScaleMin(s, blk[4:16])
			rec[2624+16*s+r], rec[2752+16*s+r] = sc, m
		}
	})
}
