package model

import "testing"

// BenchmarkSoftmax512: the attention softmax over 512 scores.
func BenchmarkSoftmax512(b *testing.B) {
	x := make([]float32, 512)
	for i := range x {
		x[i] = float32(i%37) * 0.1
	}
	y := make([]float32, 512)
	c0 := cpuTime()
	for range b.N {
		copy(y, x)
		softmax(y)
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N*512), "cpu-ns/elem")
}
