// Package stats holds the statistics that flow from the engine core to the
// stat loggers: the per-step SchedulerStats snapshot, the engine-core events
// (QUEUED, SCHEDULED, PREEMPTED), per-request timing (RequestStateStats) and
// the per-iteration accumulator (IterationStats) with the interval formulas.
//
// vLLM counterpart: vllm/v1/metrics/stats.py and the event types of
// vllm/v1/engine/__init__.py. Contract: docs/metrics.md (decisions and formulas).
//
// Imports: nothing internal (a leaf).
//
// Clocks: every timestamp is a time.Time carrying Go's monotonic reading, so
// intervals are monotonic; intervals are clamped at zero, never negative.
// TTFT and e2e latency run from the caller's arrival time (taken before
// tokenization) to the iteration timestamp; queue, prefill, decode,
// inference and inter-token intervals use the engine's event and step stamps.
//
// Invariants kept by the formulas (formulas.go):
//   - inference == prefill + decode for every finished request, exactly;
//   - an output without tokens observes no TTFT and no inter-token latency;
//   - with k tokens in one output, the gap since the previous output is
//     spread over k inter-token samples, so ITL samples == tokens − 1;
//   - prompt tokens are counted once per request (at its first output),
//     split into computed + cached == total.
package stats
