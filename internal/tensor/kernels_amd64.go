//go:build amd64 && !purego

package tensor

// archImpls lists the SIMD levels this CPU can run, slowest first.
func archImpls() []*kernels { return nil }
