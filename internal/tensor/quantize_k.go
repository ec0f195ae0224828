package tensor

import (
	"encoding/binary"
	"math"
)

// GGML's reference quantizers for the block formats (ggml-quants.c:
// quantize_row_*_ref, and quantize_iq4_nl / quantize_iq4_xs without an
// importance matrix, which is what llama-quantize writes), ported
// operation by operation in float32: GGML builds them without FMA, so
// every product and sum is rounded on its own (the float32 conversions
// below keep Go from fusing them). Each function writes one block (32 or
// 256 values) of src to dst.

const groupMaxEps = 1e-15 // GGML's GROUP_MAX_EPS

// nearestInt is GGML's nearest_int: round half to even through the
// float32 magic number 1.5·2^23 (|f| ≤ 4194303).
func nearestInt(f float32) int {
	v := f + 12582912
	return int(int32(math.Float32bits(v)&0x007fffff) - 0x00400000)
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

func sqrt32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }

// absMax returns the value of largest magnitude (the first of equals)
// and its magnitude.
func absMax(x []float32) (mx, amax float32) {
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	return mx, amax
}

// makeQXQuants is make_qx_quants with rmse_type 1 and no importance
// weights (Q6_K): L gets l+nmax, the result is the scale.
func makeQXQuants(x []float32, L []int8, nmax int) float32 {
	mx, amax := absMax(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	sums := func(iscale float32, set bool) (sumlx, suml2 float32) {
		for i, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			if set {
				L[i] = int8(l + nmax)
			}
			w, fl := float32(v*v), float32(l)
			sumlx += float32(float32(w*v) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		return sumlx, suml2
	}
	sumlx, suml2 := sums(float32(-nmax)/mx, true)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale := -(float32(nmax) + float32(float32(0.1)*float32(is))) / mx
		slx, sl2 := sums(iscale, false)
		if sl2 > 0 && float32(slx*slx) > float32(best*sl2) {
			sums(iscale, true)
			scale = slx / sl2
			best = scale * slx
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants with do_rmse (Q3_K): L gets l+nmax.
func makeQ3Quants(x []float32, L []int8, nmax int) float32 {
	mx, amax := absMax(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w, fl := float32(v*v), float32(l)
		sumlx += float32(float32(w*v) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	for itry := 0; itry < 5; itry++ {
		changed := false
		for i, v := range x {
			w, li := float32(v*v), float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx <= 0 {
				continue
			}
			sl2 := suml2 - float32(float32(w*li)*li)
			nl := clampInt(nearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
			if nl == int(L[i]) {
				continue
			}
			fn := float32(nl)
			slx += float32(float32(w*v) * fn)
			sl2 += float32(float32(w*fn) * fn)
			if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
				L[i], sumlx, suml2 = int8(nl), slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// qkx2 holds make_qkx2_quants' search parameters.
type qkx2 struct {
	nmax         int
	rmin, rdelta float32
	nstep        int
	useMAD       bool
}

// makeQKX2Quants is make_qkx2_quants: L gets the levels, the results are
// the scale and the min (as GGML's *the_min, −min).
func makeQKX2Quants(x, weights []float32, L, laux []uint8, p qkx2) (scale, theMin float32) {
	mn, mx := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		mn, mx = min(mn, x[i]), max(mx, x[i])
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(L)
		return 0, -mn
	}
	nmax := float32(p.nmax)
	errOf := func(scale, mn float32, L []uint8) float32 {
		var e float32
		for i, v := range x {
			diff := float32(float32(scale*float32(L[i]))+mn) - v
			if p.useMAD {
				diff = abs32(diff)
			} else {
				diff = float32(diff * diff)
			}
			e += float32(weights[i] * diff)
		}
		return e
	}
	iscale := nmax / (mx - mn)
	scale = 1 / iscale
	for i, v := range x {
		L[i] = uint8(clampInt(nearestInt(float32(iscale*(v-mn))), 0, p.nmax))
	}
	best := errOf(scale, mn, L)
	for is := 0; is <= p.nstep; is++ {
		iscale = float32(float32(p.rmin+float32(p.rdelta*float32(is)))+nmax) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(float32(iscale*(v-mn))), 0, p.nmax)
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D <= 0 {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if cur := errOf(thisScale, thisMin, laux[:len(x)]); cur < best {
			copy(L, laux[:len(x)])
			best, scale, mn = cur, thisScale, thisMin
		}
	}
	return scale, -mn
}

// quantizeQ2K is quantize_row_q2_K_ref for one super-block:
// scales[16] (scale | min<<4), qs[64], f16 d, f16 dmin.
func quantizeQ2K(dst []byte, x []float32) {
	var L, laux [256]uint8
	var weights, mins, scales [16]float32
	var maxScale, maxMin float32
	for j := 0; j < 16; j++ {
		xj := x[16*j : 16*j+16]
		for l, v := range xj {
			weights[l] = abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(xj, weights[:], L[16*j:16*j+16], laux[:16], qkx2{3, -0.5, 0.1, 15, true})
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	sc := dst[:16]
	clear(sc)
	putF16(dst[80:], 0)
	putF16(dst[82:], 0)
	if maxScale > 0 {
		iscale := 15 / maxScale
		for j := range sc {
			sc[j] = uint8(nearestInt(iscale * scales[j]))
		}
		putF16(dst[80:], maxScale/15)
	}
	if maxMin > 0 {
		iscale := 15 / maxMin
		for j := range sc {
			sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
		}
		putF16(dst[82:], maxMin/15)
	}
	d0, m0 := f16At(dst, 80), f16At(dst, 82)
	for j := 0; j < 16; j++ {
		d := d0 * float32(sc[j]&0xF)
		if d == 0 {
			continue
		}
		dm := m0 * float32(sc[j]>>4)
		for ii := 0; ii < 16; ii++ {
			L[16*j+ii] = uint8(clampInt(nearestInt((x[16*j+ii]+dm)/d), 0, 3))
		}
	}
	pack2bit(dst[16:80], L[:])
}

// pack2bit writes 256 2-bit values as GGML's Q2_K/Q3_K qs: per 128, byte
// l holds values l, l+32, l+64, l+96.
func pack2bit(qs []byte, L []uint8) {
	for j := 0; j < 256; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// quantizeQ3K is quantize_row_q3_K_ref for one super-block: hmask[32],
// qs[64], scales[12], f16 d.
func quantizeQ3K(dst []byte, x []float32) {
	var L [256]int8
	var scales [16]float32
	var maxScale, amax float32
	for j := 0; j < 16; j++ {
		scales[j] = makeQ3Quants(x[16*j:16*j+16], L[16*j:16*j+16], 4)
		if s := abs32(scales[j]); s > amax {
			amax, maxScale = s, scales[j]
		}
	}
	sc := dst[96:108]
	clear(sc)
	putF16(dst[108:], 0)
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := 0; j < 16; j++ {
			l := uint8(clampInt(int(int8(nearestInt(iscale*scales[j]))), -32, 31) + 32)
			if j < 8 {
				sc[j] = l & 0xF
			} else {
				sc[j-8] |= (l & 0xF) << 4
			}
			sc[j%4+8] |= (l >> 4) << (2 * (j / 4))
		}
		putF16(dst[108:], 1/iscale)
	}
	d0 := f16At(dst, 108)
	for j := 0; j < 16; j++ {
		var s int8
		if j < 8 {
			s = int8(sc[j] & 0xF)
		} else {
			s = int8(sc[j-8] >> 4)
		}
		s = (s | int8((sc[8+j%4]>>(2*(j/4)))&3)<<4) - 32
		d := d0 * float32(s)
		if d == 0 {
			continue
		}
		for ii := 0; ii < 16; ii++ {
			L[16*j+ii] = int8(clampInt(nearestInt(x[16*j+ii]/d), -4, 3) + 4)
		}
	}
	hmask := dst[:32]
	clear(hmask)
	var u [256]uint8
	for j := range L {
		u[j] = uint8(L[j])
		if u[j] > 3 {
			hmask[j%32] |= 1 << (j / 32)
			u[j] -= 4
		}
	}
	pack2bit(dst[32:96], u[:])
}

// quantizeK4Scales runs quantize_row_q{4,5}_K_ref's scale search for one
// super-block (nmax 15 or 31) and writes d, dmin and the 12 scale bytes
// (GGML's 6-bit packing) to dst[0:16]; L gets the levels.
func quantizeK4Scales(dst []byte, x []float32, L *[256]uint8, p qkx2) {
	var laux [32]uint8
	var weights [32]float32
	var mins, scales [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xj := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xj {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xj {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(xj, weights[:], L[32*j:32*j+32], laux[:], p)
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := dst[4:16]
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
		} else {
			sc[j+4] = ls&0xF | (lm&0xF)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	putF16(dst[0:], maxScale/63)
	putF16(dst[2:], maxMin/63)
	d0, m0 := f16At(dst, 0), f16At(dst, 2)
	for j := 0; j < 8; j++ {
		s, m := scaleMinK4(j, sc)
		d := d0 * float32(s)
		if d == 0 {
			continue
		}
		dm := m0 * float32(m)
		for ii := 0; ii < 32; ii++ {
			L[32*j+ii] = uint8(clampInt(nearestInt((x[32*j+ii]+dm)/d), 0, p.nmax))
		}
	}
}

// scaleMinK4 is GGML's get_scale_min_k4.
func scaleMinK4(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// quantizeQ4K is quantize_row_q4_K_ref for one super-block.
func quantizeQ4K(dst []byte, x []float32) {
	var L [256]uint8
	quantizeK4Scales(dst, x, &L, qkx2{15, -1, 0.1, 20, false})
	q := dst[16:144]
	for j := 0; j < 256; j += 64 {
		for l := 0; l < 32; l++ {
			q[j/2+l] = L[j+l] | L[j+l+32]<<4
		}
	}
}

// quantizeQ5K is quantize_row_q5_K_ref for one super-block.
func quantizeQ5K(dst []byte, x []float32) {
	var L [256]uint8
	quantizeK4Scales(dst, x, &L, qkx2{31, -0.5, 0.1, 15, false})
	qh, ql := dst[16:48], dst[48:176]
	clear(qh)
	m1, m2 := uint8(1), uint8(2)
	for n := 0; n < 256; n += 64 {
		for j := 0; j < 32; j++ {
			l1, l2 := L[n+j], L[n+j+32]
			if l1 > 15 {
				l1 -= 16
				qh[j] |= m1
			}
			if l2 > 15 {
				l2 -= 16
				qh[j] |= m2
			}
			ql[n/2+j] = l1 | l2<<4
		}
		m1, m2 = m1<<2, m2<<2
	}
}

// quantizeQ6K is quantize_row_q6_K_ref for one super-block: ql[128],
// qh[64], scales[16] (int8), f16 d.
func quantizeQ6K(dst []byte, x []float32) {
	var L [256]int8
	var scales [16]float32
	var maxScale, maxAbs float32
	for ib := 0; ib < 16; ib++ {
		scales[ib] = makeQXQuants(x[16*ib:16*ib+16], L[16*ib:16*ib+16], 32)
		if a := abs32(scales[ib]); a > maxAbs {
			maxAbs, maxScale = a, scales[ib]
		}
	}
	clear(dst[:210])
	if maxAbs < groupMaxEps {
		return
	}
	iscale := -128 / maxScale
	putF16(dst[208:], 1/iscale)
	sc := dst[192:208]
	for ib := range sc {
		sc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
	}
	d0 := f16At(dst, 208)
	for j := 0; j < 16; j++ {
		d := d0 * float32(int8(sc[j]))
		if d == 0 {
			continue
		}
		for ii := 0; ii < 16; ii++ {
			L[16*j+ii] = int8(clampInt(nearestInt(x[16*j+ii]/d), -32, 31) + 32)
		}
	}
	ql, qh := dst[0:128], dst[128:192]
	for j := 0; j < 256; j += 128 {
		for l := 0; l < 32; l++ {
			q1, q2, q3, q4 := uint8(L[j+l]), uint8(L[j+l+32]), uint8(L[j+l+64]), uint8(L[j+l+96])
			ql[j/2+l] = q1&0xF | (q3&0xF)<<4
			ql[j/2+l+32] = q2&0xF | (q4&0xF)<<4
			qh[j/4+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
}
