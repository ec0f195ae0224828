package constraint

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkMask measures the time of one token mask (TBM) with the Llama-3
// vocabulary (128k tokens), one thread: every token of every valid instance
// of the CI subset of MaskBench, each schema compiled afresh per iteration.
// It reports the p50 and p99 per mask (wall time, and the thread's CPU time,
// which other processes sharing the CPUs do not inflate) and the p50 time to
// first mask:
//
//	go test ./internal/constraint -run '^$' -bench BenchmarkMask -benchtime 1x -count 1
func BenchmarkMask(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tok, m := llama3Matcher(b)
	cases := loadMaskBench(b, *maskbenchFull)
	b.ResetTimer()
	var sc benchScore
	for range b.N {
		sc = benchScore{}
		for i := range cases {
			scoreCase(b, &cases[i], tok, m, &sc, 1)
		}
	}
	b.ReportMetric(float64(percentile(sc.masks, 0.5))/float64(time.Microsecond), "p50-µs/mask")
	b.ReportMetric(float64(percentile(sc.masks, 0.99))/float64(time.Microsecond), "p99-µs/mask")
	b.ReportMetric(float64(percentile(sc.masksCPU, 0.5))/float64(time.Microsecond), "p50-cpu-µs/mask")
	b.ReportMetric(float64(percentile(sc.masksCPU, 0.99))/float64(time.Microsecond), "p99-cpu-µs/mask")
	b.ReportMetric(float64(percentile(sc.ttfm, 0.5))/float64(time.Microsecond), "ttfm-p50-µs")
}
