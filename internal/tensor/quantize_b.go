package tensor

import "encoding/binary"

// GGML's quantizers for the 32-blocks (quantize_row_q4_1_ref,
// quantize_row_q5_0_ref, quantize_row_q5_1_ref) and the IQ4 formats
// (quantize_iq4_nl, quantize_iq4_xs with no importance matrix: seven
// scale trials each side, as llama-quantize writes them); see
// quantize_k.go.

// minMax returns the smallest and largest of x.
func minMax(x []float32) (mn, mx float32) {
	mn, mx = float32(3.4028234663852886e38), float32(-3.4028234663852886e38)
	for _, v := range x {
		mn, mx = min(mn, v), max(mx, v)
	}
	return mn, mx
}

// quantizeQ4_1 is quantize_row_q4_1_ref for one block: f16 d, f16 m, qs[16].
func quantizeQ4_1(dst []byte, x []float32) {
	mn, mx := minMax(x)
	d := (mx - mn) / 15
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(dst[0:], d)
	putF16(dst[2:], mn)
	for j := 0; j < 16; j++ {
		x0, x1 := float32((x[j]-mn)*id), float32((x[16+j]-mn)*id)
		dst[4+j] = uint8(min(15, int8(x0+0.5))) | uint8(min(15, int8(x1+0.5)))<<4
	}
}

// quantizeQ5_0 is quantize_row_q5_0_ref for one block: f16 d, qh (32
// bits), qs[16].
func quantizeQ5_0(dst []byte, x []float32) {
	mx, _ := absMax(x)
	d := mx / -16
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(dst[0:], d)
	put5bit(dst[2:], x, func(v float32) uint8 { return uint8(min(31, int8(float32(v*id)+16.5))) })
}

// quantizeQ5_1 is quantize_row_q5_1_ref for one block: f16 d, f16 m, qh,
// qs[16].
func quantizeQ5_1(dst []byte, x []float32) {
	mn, mx := minMax(x)
	d := (mx - mn) / 31
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(dst[0:], d)
	putF16(dst[2:], mn)
	put5bit(dst[4:], x, func(v float32) uint8 { return uint8(float32((v-mn)*id) + 0.5) })
}

// put5bit writes 32 five-bit values q(x[j]) as qh (the fifth bits, j in
// bit j) then 16 nibble bytes (j and 16+j).
func put5bit(dst []byte, x []float32, q func(float32) uint8) {
	var qh uint32
	for j := 0; j < 16; j++ {
		x0, x1 := q(x[j]), q(x[16+j])
		dst[4+j] = x0&0x0F | (x1&0x0F)<<4
		qh |= uint32(x0&0x10)>>4<<j | uint32(x1&0x10)>>4<<(j+16)
	}
	binary.LittleEndian.PutUint32(dst, qh)
}

// bestIndexInt8 is GGML's best_index_int8 over the IQ4_NL table.
func bestIndexInt8(x float32) uint8 {
	val := &kvaluesIQ4NL
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return uint8(mu - 1)
	}
	return uint8(mu)
}

// iq4BlockScale is quantize_row_iq4_nl_impl's search for one block of 32
// (ntry 7, weights x²): the block's scale; L gets the first trial's
// indices.
func iq4BlockScale(xb []float32, L []uint8) float32 {
	mx, amax := absMax(xb)
	if amax < groupMaxEps {
		return 0
	}
	v0 := float32(kvaluesIQ4NL[0])
	sums := func(id float32, set bool) (sumqx, sumq2 float32) {
		for j, v := range xb {
			l := bestIndexInt8(float32(id * v))
			if set {
				L[j] = l
			}
			q, w := float32(kvaluesIQ4NL[l]), float32(v*v)
			sumqx += float32(float32(w*q) * v)
			sumq2 += float32(float32(w*q) * q)
		}
		return sumqx, sumq2
	}
	d := -mx / v0
	sumqx, sumq2 := sums(1/d, true)
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -7; itry <= 7; itry++ {
		sqx, sq2 := sums(float32(itry+int(kvaluesIQ4NL[0]))/mx, false)
		if sq2 > 0 && float32(sqx*sqx) > float32(best*sq2) {
			d = sqx / sq2
			best = d * sqx
		}
	}
	return d
}

// packIQ4 writes the nibble indices of 32-blocks: byte j of block i holds
// L[32i+j] and L[32i+16+j].
func packIQ4(q4 []byte, L []uint8) {
	for i := 0; i < len(L)/32; i++ {
		for j := 0; j < 16; j++ {
			q4[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// quantizeIQ4NL is quantize_iq4_nl for one block: f16 d, qs[16].
func quantizeIQ4NL(dst []byte, x []float32) {
	var L [32]uint8
	s := iq4BlockScale(x, L[:])
	putF16(dst, s)
	var id float32
	if s != 0 {
		id = 1 / s
	}
	for j, v := range x {
		L[j] = bestIndexInt8(float32(id * v))
	}
	packIQ4(dst[2:18], L[:])
}

// quantizeIQ4XS is quantize_iq4_xs for one super-block: f16 d, scales_h
// (u16), scales_l[4], qs[128].
func quantizeIQ4XS(dst []byte, x []float32) {
	var L [256]uint8
	var scales [8]float32
	var maxScale, amaxScale float32
	for ib := range scales {
		scales[ib] = iq4BlockScale(x[32*ib:32*ib+32], L[32*ib:32*ib+32])
		if a := abs32(scales[ib]); a > amaxScale {
			amaxScale, maxScale = a, scales[ib]
		}
	}
	d := -maxScale / 32
	putF16(dst, d)
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var sh uint16
	sl := dst[4:8]
	for ib := range scales {
		l := clampInt(nearestInt(id*scales[ib]), -32, 31)
		dl := d * float32(l)
		var idl float32
		if dl != 0 {
			idl = 1 / dl
		}
		for j := 32 * ib; j < 32*ib+32; j++ {
			L[j] = bestIndexInt8(float32(idl * x[j]))
		}
		l += 32
		if ib%2 == 0 {
			sl[ib/2] = uint8(l & 0xF)
		} else {
			sl[ib/2] |= uint8(l&0xF) << 4
		}
		sh |= uint16(l>>4) << (2 * (ib % 8))
	}
	binary.LittleEndian.PutUint16(dst[2:], sh)
	packIQ4(dst[8:136], L[:])
}
