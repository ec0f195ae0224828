//go:build !amd64 || purego

package sampling

import "math"

// expShiftVec has no vector kernel on this platform: expShift does it all.
func expShiftVec(w, l []float32, m, invT, cut float32) int { return 0 }

// maxVec has no vector kernel on this platform: maxOf does it all.
func maxVec(x []float32) (float32, int) { return float32(math.Inf(-1)), 0 }
