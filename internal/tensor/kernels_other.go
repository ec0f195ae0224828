//go:build !amd64 || purego

package tensor

// archImpls lists the SIMD levels available; none without assembly.
func archImpls() []*kernels { return nil }
