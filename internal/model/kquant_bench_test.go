package model

import (
	"testing"
)

// BenchmarkPrefillKQuant: one 128-token prompt per iteration, one thread,
// on the stories110m shape quantized at load as llama-quantize's K-quant
// file types (the packed K kernels' prefill; --quantization in govllm
// generate).
// Run: go test -run '^$' -bench PrefillKQuant ./internal/model
func BenchmarkPrefillKQuant(b *testing.B) {
	for _, q := range []string{"q4_k_m", "q6_k", "q3_k_m", "q5_k_m"} {
		b.Run(q, func(b *testing.B) {
			c, err := DummyConfig("stories110m")
			if err != nil {
				b.Fatal(err)
			}
			m, err := NewDummyQuantized(c, q, 1)
			if err != nil {
				b.Fatal(err)
			}
			benchPrefill(b, m, 1, benchPrompt)
		})
	}
}
