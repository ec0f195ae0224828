//go:build amd64 && !purego

package sampling

import (
	"math"

	"golang.org/x/sys/cpu"
)

// hasExpVec reports whether expShiftAVX512 can run here.
var hasExpVec = cpu.X86.HasAVX512F

// expConsts are the constants of expShift's polynomial, rounded to float32
// exactly as the Go expressions round them, for expShiftAVX512.
var expConsts = [...]float32{
	-87.33654,           // 0: below this, exp is 0
	1.44269504088896341, // 1: log2(e)
	0.5,                 // 2
	0.693359375,         // 3: ln 2, high part
	-2.12194440e-4,      // 4: ln 2, low part
	1.9875691500e-4,     // 5: p0
	1.3981999507e-3,     // 6
	8.3334519073e-3,     // 7
	4.1665795894e-2,     // 8
	1.6666665459e-1,     // 9
	5.0000001201e-1,     // 10: p5
	1,                   // 11
}

// expShiftAVX512 writes w[i] = exp((l[i]-m)·invT), or 0 where the
// exponent is below cut or -87.33654 (or NaN), for i < n (a multiple of 16):
// the loop of expShift sixteen lanes at a time, with the same operations in
// the same order (no fused multiply-adds), so the same bits.
//
//go:noescape
func expShiftAVX512(w, l *float32, n int, m, invT, cut float32, c *[12]float32)

// expShiftVec runs the vector kernel over the leading multiple of 16 of l
// and returns how many values it wrote.
func expShiftVec(w, l []float32, m, invT, cut float32) int {
	n := len(l) &^ 15
	if !hasExpVec || n == 0 {
		return 0
	}
	_ = w[n-1]
	expShiftAVX512(&w[0], &l[0], n, m, invT, cut, &expConsts)
	return n
}

// maxAVX512 writes to out the lane-wise maximum of the non-NaN values of
// x[0:n], n a positive multiple of 16.
//
//go:noescape
func maxAVX512(x *float32, n int, out *[16]float32)

// maxVec returns the largest non-NaN value of the leading multiple of 16
// of x (-Inf if none) and how many values it covered.
func maxVec(x []float32) (float32, int) {
	n := len(x) &^ 15
	if !hasExpVec || n == 0 {
		return float32(math.Inf(-1)), 0
	}
	var lanes [16]float32
	maxAVX512(&x[0], n, &lanes)
	m := lanes[0]
	for _, v := range lanes[1:] {
		if v > m {
			m = v
		}
	}
	return m, n
}
