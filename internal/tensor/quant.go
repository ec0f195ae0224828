package tensor

import "math"

// QuantizeQ8_0 writes src as GGML Q8_0 blocks to dst: per 32 values, the
// float16 scale d = max|x|/127 (little endian) then 32 int8 round(x/d).
// len(src) must be a multiple of 32 and len(dst) ≥ len(src)/32·34.
// The result is bit-identical to GGML's quantize_row_q8_0_ref.
func QuantizeQ8_0(dst []byte, src []float32) {
	if len(src)%Q8BlockSize != 0 {
		panic("tensor: QuantizeQ8_0: length not a multiple of 32")
	}
	nb := len(src) / Q8BlockSize
	if nb == 0 {
		return
	}
	_ = dst[nb*Q8BlockBytes-1]
	quantizeQ8Go(dst, src)
}

// quantizeQ8Go is QuantizeQ8_0 in plain Go. (The activation quantizer,
// quantizeRow and its kernels, follows GGML's x86 quantize_row_q8_0
// instead, as llama.cpp does for activations.)
func quantizeQ8Go(dst []byte, src []float32) {
	nb := len(src) / Q8BlockSize
	for b := 0; b < nb; b++ {
		x := src[b*Q8BlockSize : (b+1)*Q8BlockSize]
		blk := dst[b*Q8BlockBytes : (b+1)*Q8BlockBytes]
		d := q8Scale(x)
		h := F32ToF16(d)
		blk[0], blk[1] = byte(h), byte(h>>8)
		q8Round(blk[2:2+Q8BlockSize], x, d)
	}
}

// q8Scale returns max|x|/127 for one block.
func q8Scale(x []float32) float32 { return q8Amax(x) / 127 }

// q8Amax returns max|x| of one block.
func q8Amax(x []float32) float32 {
	var m uint32 // max |x| as bits: for non-negative floats, order is bit order
	for _, v := range x {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return math.Float32frombits(m)
}

// q8Round writes round-half-away-from-zero(x/d) as int8 to q (zeros when d
// is 0), like C's roundf(x·(1/d)).
func q8Round(q []byte, x []float32, d float32) {
	var id float32
	if d != 0 {
		id = 1 / d
	}
	q = q[:len(x)]
	for j, v := range x {
		// |v·id| ≤ 127, so adding ±0.5 in float64 is exact and the
		// conversion's truncation completes the rounding.
		f := float64(v * id)
		q[j] = byte(int8(f + math.Copysign(0.5, f)))
	}
}

// DequantizeQ8_0 expands Q8_0 blocks from src into dst; len(dst) must be a
// multiple of 32 and src must hold len(dst)/32 blocks.
func DequantizeQ8_0(dst []float32, src []byte) {
	if len(dst)%Q8BlockSize != 0 {
		panic("tensor: DequantizeQ8_0: length not a multiple of 32")
	}
	nb := len(dst) / Q8BlockSize
	_ = src[nb*Q8BlockBytes-1]
	for b := 0; b < nb; b++ {
		blk := src[b*Q8BlockBytes : (b+1)*Q8BlockBytes]
		d := F16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
		out := dst[b*Q8BlockSize : (b+1)*Q8BlockSize]
		for j := range out {
			out[j] = d * float32(int8(blk[2+j]))
		}
	}
}

// F32ToF16 converts f to an IEEE half-precision bit pattern, rounding to
// nearest even; values too large become ±Inf, NaN stays NaN (quiet).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or zero): shift the full significand right.
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to Inf: still correct
	}
	return sign | uint16(h)
}

// QuantizeQ4_0 writes src as GGML Q4_0 blocks to dst: per 32 values, the
// float16 scale d = m/−8 (m the value of largest magnitude, the first of
// equals, NaNs skipped; +0 if all are zeros or NaNs) then the nibbles min(15, trunc(x/d + 8.5)), values 0..15 in the
// low nibbles and 16..31 in the high ones. len(src) must be a multiple of
// 32 and len(dst) ≥ len(src)/32·18. The result is bit-identical to GGML's
// quantize_row_q4_0_ref (which divides by the unrounded d).
func QuantizeQ4_0(dst []byte, src []float32) {
	if len(src)%Q8BlockSize != 0 {
		panic("tensor: QuantizeQ4_0: length not a multiple of 32")
	}
	nb := len(src) / Q8BlockSize
	if nb == 0 {
		return
	}
	_ = dst[nb*Q4BlockBytes-1]
	if impl.quantizeQ4 != nil {
		impl.quantizeQ4(dst[:nb*Q4BlockBytes], src)
		return
	}
	quantizeQ4Go(dst, src)
}

// quantizeQ4Go is QuantizeQ4_0 in plain Go (the go level's, and the
// reference the kernels are tested against), len(dst) checked.
func quantizeQ4Go(dst []byte, src []float32) {
	nb := len(src) / Q8BlockSize
	for b := 0; b < nb; b++ {
		x := (*[Q8BlockSize]float32)(src[b*Q8BlockSize:])
		blk := (*[Q4BlockBytes]byte)(dst[b*Q4BlockBytes:])
		// The largest magnitude (as bits: for non-negative floats, order
		// is bit order), then the first value that has it; two passes
		// without data-dependent branches in the first. As in GGML, NaNs
		// are skipped (its amax < |NaN| is false) and m starts at +0, so a
		// block of zeros of either sign gets d = −0.
		var amax uint32
		for _, v := range x {
			amax = max(amax, math.Float32bits(v)&^(1<<31))
		}
		if amax > 0x7f800000 { // a NaN: again without them
			amax = 0
			for _, v := range x {
				if a := math.Float32bits(v) &^ (1 << 31); a <= 0x7f800000 {
					amax = max(amax, a)
				}
			}
		}
		var m float32
		for _, v := range x {
			if math.Float32bits(v)&^(1<<31) == amax {
				m = v
				break
			}
		}
		if amax == 0 {
			m = 0
		}
		d := m / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		h := F32ToF16(d)
		blk[0], blk[1] = byte(h), byte(h>>8)
		for j := 0; j < 16; j++ {
			// float32(·) before the + keeps the product rounded (never fused).
			lo := min(15, int8(float32(x[j]*id)+8.5))
			hi := min(15, int8(float32(x[16+j]*id)+8.5))
			blk[2+j] = byte(lo) | byte(hi)<<4
		}
	}
}

// DequantizeQ4_0 expands Q4_0 blocks from src into dst; len(dst) must be a
// multiple of 32 and src must hold len(dst)/32 blocks.
func DequantizeQ4_0(dst []float32, src []byte) {
	if len(dst)%Q8BlockSize != 0 {
		panic("tensor: DequantizeQ4_0: length not a multiple of 32")
	}
	nb := len(dst) / Q8BlockSize
	_ = src[nb*Q4BlockBytes-1]
	for b := 0; b < nb; b++ {
		blk := src[b*Q4BlockBytes : (b+1)*Q4BlockBytes]
		d := F16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
		out := dst[b*Q8BlockSize : (b+1)*Q8BlockSize]
		for j := 0; j < 16; j++ {
			out[j] = float32(int(blk[2+j]&15)-8) * d
			out[16+j] = float32(int(blk[2+j]>>4)-8) * d
		}
	}
}

// expandQ4 writes the Q4_0 blocks of src as Q8_0 blocks to dst, exactly:
// the same float16 scale, the weights q as int8 (−8..7).
func expandQ4(dst, src []byte) {
	nb := len(src) / Q4BlockBytes
	_ = dst[nb*Q8BlockBytes-1]
	for b := 0; b < nb; b++ {
		s := src[b*Q4BlockBytes : (b+1)*Q4BlockBytes : (b+1)*Q4BlockBytes]
		d := dst[b*Q8BlockBytes : (b+1)*Q8BlockBytes : (b+1)*Q8BlockBytes]
		d[0], d[1] = s[0], s[1]
		for j := 0; j < 16; j++ {
			d[2+j] = byte(int8(s[2+j]&15) - 8)
			d[18+j] = byte(int8(s[2+j]>>4) - 8)
		}
	}
}
