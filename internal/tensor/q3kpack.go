package tensor

// Packed Q3_K layout (Mat.P of a Q3_K matrix, made by PackBlocks at a
// level with Q3_K kernels).
//
// W rows in groups of 16 (the last padded with zero rows); per group g and
// super-block b a record of q3kRecord bytes at P[(g·nb+b)·q3kRecord:]:
//
//	[0, 1024)     for half n < 2 and lane k < 8, 64 bytes at 512n + 64k:
//	              byte 4r+t is the GGML byte qs[32n+4k+t] of row r (bits
//	              2j, 2j+1: column 128n+32j+4k+t)
//	[1024, 1536)  for lane k, 64 bytes at 1024 + 64k: byte 4r+t is
//	              hmask[4k+t] (bit 4n+j: the high bit of that column)
//	[1536, 1792)  the scales as int8 (the 6-bit value − 32), byte 16s+r of
//	              sub-block s (16 values), row r
//	[1792, 1824)  the 16 rows' float16 d
//
// 3.6% more than the GGML blocks. The weights q+4 (0..7, q the signed
// 3-bit weight) run through VPDPBUSD from the step's −4·Σx; the arithmetic
// is stepLanes's (blockmm.go) bit for bit.
const q3kRecord = 1824

// packQ3K returns the packed form of the GGML Q3_K rows q.
func packQ3K(q []byte, rows, cols int) []byte {
	return packRecords(q, rows, cols, 110, q3kRecord, func(rec, blk []byte, r int) {
		for k := 0; k < 8; k++ {
			for n := 0; n < 2; n++ {
				copy(rec[512*n+64*k+4*r:512*n+64*k+4*r+4], blk[32+32*n+4*k:])
			}
			copy(rec[1024+64*k+4*r:1024+64*k+4*r+4], blk[4*k:])
		}
		var u unpacked
		unpackQ3K(&u, blk)
		for s := 0; s < 16; s++ {
			rec[1536+16*s+r] = byte(int8(u.sc[s]))
		}
		copy(rec[1792+2*r:], blk[108:110])
	})
}
