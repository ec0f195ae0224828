package tensor

import "encoding/binary"

// Block layouts (GGML's ggml-common.h) and their unpacking into the
// integer form of the dot product (Codec.unpack). Each follows GGML's
// dequantize_row_* element order.

// kvaluesIQ4NL is GGML's non-linear 4-bit table (IQ4_NL, IQ4_XS).
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// unpackNibbles32 writes the 32 weights of 16 nibble bytes: low nibbles
// are weights 0..15, high nibbles 16..31, each mapped by f.
func unpackNibbles32(q []int8, qs []byte, f func(v byte, e int) int8) {
	for j := 0; j < 16; j++ {
		q[j] = f(qs[j]&15, j)
		q[16+j] = f(qs[j]>>4, 16+j)
	}
}

// Q4_1: f16 d, f16 m, qs[16].
func unpackQ4_1(u *unpacked, b []byte) {
	u.d, u.dmin = f16At(b, 0), f16At(b, 2)
	unpackNibbles32(u.q[:32], b[4:20], func(v byte, _ int) int8 { return int8(v) })
}

// Q5_0: f16 d, qh (32 bits: the fifth bit of each weight), qs[16]; q−16.
func unpackQ5_0(u *unpacked, b []byte) {
	u.d = f16At(b, 0)
	qh := binary.LittleEndian.Uint32(b[2:])
	unpackNibbles32(u.q[:32], b[6:22], func(v byte, e int) int8 { return int8(v|byte(qh>>e&1)<<4) - 16 })
}

// Q5_1: f16 d, f16 m, qh, qs[16].
func unpackQ5_1(u *unpacked, b []byte) {
	u.d, u.dmin = f16At(b, 0), f16At(b, 2)
	qh := binary.LittleEndian.Uint32(b[4:])
	unpackNibbles32(u.q[:32], b[8:24], func(v byte, e int) int8 { return int8(v | byte(qh>>e&1)<<4) })
}

// IQ4_NL: f16 d, qs[16] indexing kvaluesIQ4NL.
func unpackIQ4NL(u *unpacked, b []byte) {
	u.d = f16At(b, 0)
	unpackNibbles32(u.q[:32], b[2:18], func(v byte, _ int) int8 { return kvaluesIQ4NL[v] })
}

// q4KScaleMin unpacks sub-block j's 6-bit scale and min from the 12
// packed bytes of Q4_K/Q5_K (GGML's get_scale_min_k4).
func q4KScaleMin(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// unpackQ45K is Q4_K (qh nil) and Q5_K: f16 d, f16 dmin, scales[12], then
// (Q5_K) qh[32], then qs[128]; groups of 64 weights take 32 bytes of qs,
// low nibbles first, and (Q5_K) bits 2g and 2g+1 of qh.
func unpackQ45K(u *unpacked, b, qh, qs []byte) {
	u.d, u.dmin = f16At(b, 0), f16At(b, 2)
	for j := 0; j < 8; j++ {
		sc, m := q4KScaleMin(j, b[4:16])
		u.sc[2*j], u.sc[2*j+1] = int32(sc), int32(sc)
		u.mn[2*j], u.mn[2*j+1] = int32(m), int32(m)
	}
	for g := 0; g < 4; g++ {
		for l := 0; l < 32; l++ {
			lo, hi := qs[32*g+l]&15, qs[32*g+l]>>4
			if qh != nil {
				lo |= (qh[l] >> (2 * g) & 1) << 4
				hi |= (qh[l] >> (2*g + 1) & 1) << 4
			}
			u.q[64*g+l], u.q[64*g+32+l] = int8(lo), int8(hi)
		}
	}
}

func unpackQ4K(u *unpacked, b []byte) { unpackQ45K(u, b, nil, b[16:144]) }
func unpackQ5K(u *unpacked, b []byte) { unpackQ45K(u, b, b[16:48], b[48:176]) }

// Q6_K: ql[128], qh[64], int8 scales[16], f16 d; q = 6 bits − 32.
func unpackQ6K(u *unpacked, b []byte) {
	u.d, u.dmin = f16At(b, 208), 0
	for g := 0; g < 16; g++ {
		u.sc[g], u.mn[g] = int32(int8(b[192+g])), 0
	}
	for h := 0; h < 2; h++ {
		ql, qh := b[64*h:64*h+64], b[128+32*h:128+32*h+32]
		q := u.q[128*h : 128*h+128]
		for l := 0; l < 32; l++ {
			q[l] = int8(ql[l]&15|(qh[l]&3)<<4) - 32
			q[32+l] = int8(ql[32+l]&15|(qh[l]>>2&3)<<4) - 32
			q[64+l] = int8(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q[96+l] = int8(ql[32+l]>>4|(qh[l]>>6&3)<<4) - 32
		}
	}
}

// unpack2bit writes the 2-bit fields of qs[64] in GGML's Q2_K/Q3_K order:
// per half n of 128, shift 2j, weights 128n+32j+l from byte 32n+l.
func unpack2bit(q []int8, qs []byte, f func(v byte, e, j, n int) int8) {
	for n := 0; n < 2; n++ {
		for j := 0; j < 4; j++ {
			for l := 0; l < 32; l++ {
				e := 128*n + 32*j + l
				q[e] = f(qs[32*n+l]>>(2*j)&3, e, j, n)
			}
		}
	}
}

// Q2_K: scales[16] (low nibble scale, high nibble min), qs[64], f16 d,
// f16 dmin.
func unpackQ2K(u *unpacked, b []byte) {
	u.d, u.dmin = f16At(b, 80), f16At(b, 82)
	for g := 0; g < 16; g++ {
		u.sc[g], u.mn[g] = int32(b[g]&15), int32(b[g]>>4)
	}
	unpack2bit(u.q[:], b[16:80], func(v byte, _, _, _ int) int8 { return int8(v) })
}

// Q3_K: hmask[32], qs[64], scales[12] (16 6-bit values, stored +32), f16
// d; q = 2 bits − 4 unless the hmask bit 4n+j of byte l%32 is set.
func unpackQ3K(u *unpacked, b []byte) {
	u.d, u.dmin = f16At(b, 108), 0
	var aux [4]uint32
	for i := 0; i < 3; i++ {
		aux[i] = binary.LittleEndian.Uint32(b[96+4*i:])
	}
	const m1, m2 = 0x03030303, 0x0f0f0f0f
	tmp := aux[2]
	aux[2] = aux[0]>>4&m2 | (tmp>>4&m1)<<4
	aux[3] = aux[1]>>4&m2 | (tmp>>6&m1)<<4
	aux[0] = aux[0]&m2 | (tmp&m1)<<4
	aux[1] = aux[1]&m2 | (tmp>>2&m1)<<4
	for g := 0; g < 16; g++ {
		u.sc[g], u.mn[g] = int32(int8(aux[g/4]>>(8*(g%4))))-32, 0
	}
	hm := b[0:32]
	unpack2bit(u.q[:], b[32:96], func(v byte, e, j, n int) int8 {
		if hm[e%32]>>(4*n+j)&1 == 0 {
			return int8(v) - 4
		}
		return int8(v)
	})
}

// IQ4_XS: f16 d, u16 scales_h, scales_l[4], qs[128]; 8 sub-blocks of 32
// with the 6-bit scale ls − 32 and table nibbles.
func unpackIQ4XS(u *unpacked, b []byte) {
	u.d, u.dmin = f16At(b, 0), 0
	sh := binary.LittleEndian.Uint16(b[2:])
	for ib := 0; ib < 8; ib++ {
		ls := int32(b[4+ib/2]>>(4*(ib%2))&15) | int32(sh>>(2*ib)&3)<<4
		u.sc[2*ib], u.sc[2*ib+1] = ls-32, ls-32
		u.mn[2*ib], u.mn[2*ib+1] = 0, 0
		unpackNibbles32(u.q[32*ib:32*ib+32], b[8+16*ib:24+16*ib], func(v byte, _ int) int8 { return kvaluesIQ4NL[v] })
	}
}
