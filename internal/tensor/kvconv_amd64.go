//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func f32ToF16F16C(dst *byte, src *float32, n int)

//go:noescape
func f16ToF32F16C(dst *float32, src *byte, n int)

//go:noescape
func q8ToF32AVX2(dst *float32, src *byte, nb int)

//go:noescape
func f16RowsF16C(dst *float32, src *byte, n, rows, stride int)

//go:noescape
func q8RowsAVX2(dst *float32, src *byte, nb, rows, stride int)

// f16Native is the F16C conversion (and the AVX2 Q8_0 decoding) when the
// CPU has F16C and AVX2.
func f16Native() *f16Kernels {
	if !cpu.X86.HasF16C || !cpu.X86.HasAVX2 {
		return nil
	}
	return &f16Kernels{enc: f32ToF16F16C, dec: f16ToF32F16C, q8dec: q8ToF32AVX2, f16rows: f16RowsF16C, q8rows: q8RowsAVX2}
}
