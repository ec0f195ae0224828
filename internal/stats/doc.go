// Package stats holds the statistics that flow from the engine core to the
// stat loggers: the per-step SchedulerStats snapshot, the engine-core events
// (QUEUED, SCHEDULED, PREEMPTED), per-request timing (RequestStateStats) and
// the per-iteration accumulator (IterationStats) with the interval formulas.
//
// vLLM counterpart: vllm/v1/metrics/stats.py and the event types of
// vllm/v1/engine/__init__.py. Contract: shared/spec/metrics.md Part A and B §3–§4.
//
// Imports: nothing internal (a leaf).
//
// Clocks: every timestamp is a time.Time carrying Go's monotonic reading, so
// intervals are monotonic; intervals are clamped at zero, never negative.
package stats
