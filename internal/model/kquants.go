package model

import (
	"encoding/binary"

	"govllm/internal/tensor"
)

// GGML k-quant super-blocks: 256 values each.
const (
	qkK         = 256
	q4KBlockLen = 144 // f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles
	q6KBlockLen = 210 // 128 bytes low nibbles, 64 bytes high bit pairs, 16 int8 scales, f16 d
)

// q4KScaleMin unpacks sub-block j's 6-bit scale and min from the 12
// packed bytes: j < 4 in the low 6 bits of bytes j and j+4; j ≥ 4 split
// between a nibble of byte j+4 and the top 2 bits of bytes j-4 and j.
func q4KScaleMin(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// dequantQ4K expands Q4_K super-blocks: 8 sub-blocks of 32 values, value =
// d·scale·q − dmin·min, q a 4-bit quant; each 32 bytes of nibbles hold two
// sub-blocks (low nibbles the first, high nibbles the second).
func dequantQ4K(data []byte, n int) []float32 {
	out := make([]float32, n)
	for b := 0; b < n/qkK; b++ {
		blk := data[b*q4KBlockLen : (b+1)*q4KBlockLen]
		d := tensor.F16ToF32(binary.LittleEndian.Uint16(blk))
		dmin := tensor.F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		scales, qs := blk[4:16], blk[16:]
		y := out[b*qkK : (b+1)*qkK]
		for g := 0; g < 4; g++ { // 64 values per group of two sub-blocks
			sc1, m1 := q4KScaleMin(2*g, scales)
			sc2, m2 := q4KScaleMin(2*g+1, scales)
			d1, o1 := d*float32(sc1), dmin*float32(m1)
			d2, o2 := d*float32(sc2), dmin*float32(m2)
			q := qs[32*g : 32*g+32]
			for l, v := range q {
				y[64*g+l] = d1*float32(v&0xF) - o1
				y[64*g+32+l] = d2*float32(v>>4) - o2
			}
		}
	}
	return out
}

// dequantQ6K expands Q6_K super-blocks: 16 sub-blocks of 16 values, value =
// d·scale·(q − 32), q a 6-bit quant (4 low bits in ql, 2 high bits in qh).
// Each half (128 values) uses 64 bytes of ql, 32 of qh and 8 scales.
func dequantQ6K(data []byte, n int) []float32 {
	out := make([]float32, n)
	for b := 0; b < n/qkK; b++ {
		blk := data[b*q6KBlockLen : (b+1)*q6KBlockLen]
		d := tensor.F16ToF32(binary.LittleEndian.Uint16(blk[208:]))
		for half := 0; half < 2; half++ {
			ql := blk[64*half : 64*half+64]
			qh := blk[128+32*half : 128+32*half+32]
			sc := blk[192+8*half : 192+8*half+8]
			y := out[b*qkK+128*half : b*qkK+128*half+128]
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int(ql[l]&0xF|(qh[l]&3)<<4) - 32
				q2 := int(ql[l+32]&0xF|(qh[l]>>2&3)<<4) - 32
				q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				y[l] = d * float32(int8(sc[is])) * float32(q1)
				y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
				y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
				y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
		}
	}
	return out
}
