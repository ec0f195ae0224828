// Package llm holds govllm's two front ends over one engine core, and the
// StatLogger seam they share:
//
//   - Engine (vLLM LLMEngine): synchronous; AddRequest, then Step until
//     HasUnfinished is false, or Generate for a batch;
//   - AsyncEngine (vLLM AsyncLLM): the core's Run loop in one goroutine, the
//     output loop (processing, stream delivery, stop-string and cancellation
//     aborts back to the core) in another; Generate returns an output.Stream.
//
// Both turn every engine step into request outputs and statistics through
// one function (pipeline.handle): a fresh stats.IterationStats when the
// step has outputs → output.Processor.Process → Record(SchedulerStats,
// IterationStats) on every StatLogger. It runs for every step, including
// steps that carry only a scheduler snapshot, so gauges return to 0 after
// the last request leaves (docs/metrics.md, decisions 4 and 5).
//
// Validation happens in one place, before the engine sees a request:
// Preparer.Prepare (which both front ends embed) tokenizes and checks every
// request field — prompt and token ids, lengths against max_model_len,
// sampling ranges, stop token ids, priority, the per-request Limits — and
// returns an *apierr.Error naming the field (wrapping ErrPromptTooLong for a
// length problem). A new request field is checked there; the scheduler
// assumes valid input. Submit then starts a prepared request.
//
// Clocks: Request.ArrivalTime is stamped by the caller before tokenization
// (zero → now, on entry, before tokenizing); TTFT and e2e latency end at the
// front end's time.Now when the step's outputs are processed; every other
// interval uses the engine's event stamps. All are time.Time values with
// Go's monotonic reading.
//
// A client cancellation (ctx done in AsyncEngine.Generate, Engine.Abort)
// aborts the request in the core, which frees its KV blocks at once; the
// core's abort output then flows through the seam and is counted as a
// finished request with reason abort, marked ClientAbort so the latency
// histograms skip it (docs/metrics.md, decision 6; vLLM does not count these).
//
// vLLM counterpart: vllm/v1/engine/llm_engine.py, async_llm.py, and the
// StatLoggerBase interface of vllm/v1/metrics/loggers.py.
//
// Imports: core, sched, output, stats, sampling, tokenizer, apierr. Never
// Prometheus (stat loggers are injected) or net/http.
package llm
