//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func f32ToF16F16C(dst *byte, src *float32, n int)

//go:noescape
func f16ToF32F16C(dst *float32, src *byte, n int)

// f16Native is the F16C conversion when the CPU has F16C and AVX.
func f16Native() *f16Kernels {
	if !cpu.X86.HasF16C || !cpu.X86.HasAVX {
		return nil
	}
	return &f16Kernels{enc: f32ToF16F16C, dec: f16ToF32F16C}
}
