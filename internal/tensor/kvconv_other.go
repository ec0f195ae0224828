//go:build !amd64 || purego

package tensor

// f16Native is nil: the Go conversion.
func f16Native() *f16Kernels { return nil }
