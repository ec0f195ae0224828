package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"govllm/internal/metrics"
	"govllm/internal/stats"
)

// Example wires the package the way a server command does: one registry,
// the engine metrics and the log line as stat loggers, HTTP metrics around
// each API route, and /metrics unwrapped.
func Example() {
	reg := metrics.NewRegistry()
	prom, err := metrics.NewPrometheus(reg, metrics.PrometheusOptions{
		ModelName:   "stories260K",
		MaxModelLen: 512,
		CacheConfig: map[string]string{"block_size": "16", "num_gpu_blocks": "64"},
	})
	if err != nil {
		panic(err)
	}
	logLine := metrics.NewLogging(slog.Default(), 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go logLine.Run(ctx)

	httpMetrics, err := metrics.NewHTTP(reg)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	completions := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	mux.Handle("POST /v1/completions", httpMetrics.Middleware("/v1/completions", completions))
	mux.Handle("GET /metrics", metrics.Handler(reg))

	// The engine front end hands every step to both loggers.
	s := &stats.SchedulerStats{NumRunningReqs: 1, KVCacheUsage: 0.25}
	it := &stats.IterationStats{
		NumGenerationTokens: 1,
		PromptTokenStats:    stats.PromptTokenStats{Computed: 12, Total: 12},
	}
	for _, l := range []interface {
		Record(*stats.SchedulerStats, *stats.IterationStats)
	}{prom, logLine} {
		l.Record(s, it)
	}

	snap, err := metrics.Snapshot(reg)
	if err != nil {
		panic(err)
	}
	for _, m := range snap {
		switch m.Name {
		case "vllm:prompt_tokens", "vllm:num_requests_running", "vllm:kv_cache_usage_perc":
			fmt.Printf("%s %s %g\n", m.Kind, m.Name, m.Value)
		case "vllm:iteration_tokens_total":
			fmt.Printf("%s %s count=%d sum=%g\n", m.Kind, m.Name, m.Count, m.Sum)
		}
	}
	// Output:
	// histogram vllm:iteration_tokens_total count=1 sum=13
	// gauge vllm:kv_cache_usage_perc 0.25
	// gauge vllm:num_requests_running 1
	// counter vllm:prompt_tokens 12
}
