// Package metrics turns the engine's statistics into observable figures: the
// Prometheus families of vLLM's PrometheusStatLogger, vLLM's periodic log
// line, an in-process snapshot of the registry, and HTTP request metrics.
//
// What it owns:
//   - Prometheus: every core family of vLLM V1 (vllm:num_requests_running …
//     vllm:cache_config_info), and govllm's own structured-output compile and
//     mask histograms (govllm:*, no vLLM counterpart), registered on an
//     injected prometheus.Registerer.
//     Record applies one engine step's (SchedulerStats, IterationStats).
//   - Exemplars: the TTFT, inter-token and e2e histograms take each
//     sample's request id as the exemplar {request_id="…"} (cut to 118
//     runes, OpenMetrics' 128-rune limit less the label name); /metrics
//     shows them only to a scraper that negotiates OpenMetrics.
//   - Logging: the "Engine 000: Avg prompt throughput: …" line every interval.
//   - Snapshot: the registry read back as plain values (vLLM LLM.get_metrics()).
//   - HTTP: http_requests_total and http_request_duration_seconds middleware,
//     and the /metrics handler (gzip at the fastest level when asked).
//   - NewRegistry: a registry with the Go runtime and process collectors (on
//     Linux a lean process collector: client_golang's process_* series less
//     the network ones, without its per-scrape /proc/stat read).
//
// vLLM counterparts: vllm/v1/metrics/loggers.py (PrometheusStatLogger,
// LoggingStatLogger, build_1_2_5_buckets), vllm/v1/metrics/stats.py
// (CachingMetrics), vllm/v1/metrics/reader.py (get_metrics_snapshot), and
// prometheus-fastapi-instrumentator's default metrics. Contract:
// docs/metrics.md.
//
// Imports: internal/stats only (never internal/llm: llm consumes these types
// through its StatLogger interface), client_golang, procfs (the process
// collector), klauspost/compress (gzip), and the standard library.
//
// Invariants:
//   - No package-level metric state and no init(): every metric lives in the
//     registry passed to a constructor, so tests build a fresh one each time.
//   - Every label child exists at construction (all finished_reason, reason,
//     source and sleep_state values), so /metrics lists them at 0 before the
//     first request; engine_sleep_state{sleep_state="awake"} is 1 and
//     cache_config_info is 1.
//   - Record accepts nil SchedulerStats and/or nil IterationStats, takes no
//     lock of its own and performs no label lookups or allocations: the child
//     handles are resolved once at construction. The exception is an
//     exemplar: client_golang allocates each one (about 9 allocations), so a
//     sample with a request id costs a few microseconds
//     (BenchmarkRecordWithExemplars).
//   - A request the client cancelled (FinishedRequestStats.ClientAbort) counts
//     in request_success{finished_reason="abort"} and the token histograms,
//     never in the latency histograms (e2e, queue, prefill, decode, inference,
//     time per output token) — a deliberate divergence from vLLM, which does
//     not count such requests at all.
//   - Counters are declared with their exposed "_total" name; intervals and
//     counts are never observed negative.
//   - Label names are declared model_name, engine, then the extra label
//     (cache_config_info: its config keys sorted, then engine, no
//     model_name); client_golang writes the labels of a sample sorted by
//     name, which Prometheus parsers treat the same.
//   - A step without outputs is recorded with a nil IterationStats, and a
//     step whose outputs carry no token (aborts, failed adds) observes
//     nothing, so iteration_tokens_total counts only steps that scheduled
//     tokens and produced outputs (vLLM AsyncLLM, whose engine core emits no
//     output for an aborted request).
package metrics
