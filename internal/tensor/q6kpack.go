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
	return packRecords(q, rows, cols, 210, q6kRecord, func(rec, blk []byte, r int) {
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
	})
}
