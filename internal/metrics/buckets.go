package metrics

// Bucket upper bounds copied from vLLM's PrometheusStatLogger (+Inf implicit).
var (
	ttftBuckets = []float64{
		0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
	}
	itlBuckets = []float64{
		0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
	}
	requestLatencyBuckets = []float64{
		0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
	}
	iterationTokensBuckets = []float64{
		1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
	}
	paramsNBuckets = []float64{1, 2, 5, 10, 20}

	// httpDurationBuckets are prometheus-fastapi-instrumentator's "lowr"
	// latency buckets for http_request_duration_seconds.
	httpDurationBuckets = []float64{0.1, 0.5, 1}
)

// Buckets of govllm's own structured-output families (no vLLM
// counterpart): a token mask takes microseconds to milliseconds (the goal
// is 50 µs at the median, 500 µs at the 99th percentile), a compile up to
// seconds for a large schema.
var (
	structuredMaskBuckets = []float64{
		0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	}
	structuredCompileBuckets = []float64{
		0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
		0.1, 0.25, 0.5, 1, 2.5, 5, 10,
	}
)

// Build125Buckets returns m·10^e for e = 0, 1, 2, … and m in (1, 2, 5), in
// increasing order, stopping at the first value greater than maxValue
// (vLLM build_1_2_5_buckets): maxValue itself is not appended.
// For maxValue < 1 the result is empty.
func Build125Buckets(maxValue int) []float64 {
	var out []float64
	limit := int64(maxValue)
	// pow is a power of ten no larger than limit, so m·pow fits in int64.
	for pow := int64(1); pow <= limit; pow *= 10 {
		for _, m := range [...]int64{1, 2, 5} {
			v := m * pow
			if v > limit {
				return out
			}
			out = append(out, float64(v))
		}
		if pow > limit/10 {
			break
		}
	}
	return out
}
