// Package output turns the engine core's per-step token ids into what a
// caller reads: it owns the Processor (per-request state, incremental
// detokenization, stop strings, logprobs, Delta/Cumulative/FinalOnly
// outputs, parallel-sampling parents, and the per-request and
// per-iteration statistics), and Stream, the coalescing per-request mailbox
// the async front end delivers into.
//
// vLLM counterpart: vllm/v1/engine/output_processor.py (OutputProcessor,
// RequestState), detokenizer.py (stop strings), parallel_sampling.py
// (ParentRequest) and the per-request asyncio queue (RequestOutputCollector).
//
// Imports: sched (wire types), sampling, stats. Not the tokenizer: the
// Processor consumes a small Decoder interface built by its caller
// (*tokenizer.Decoder satisfies it; the tests use both).
//
// Invariants:
//   - a Processor belongs to one goroutine (the output side of the front
//     end) and has no locks; a Stream is the only cross-goroutine object;
//   - an output for an id the Processor does not know (already finished,
//     stopped by a stop string) is skipped without any statistics;
//   - each sequence's finish adds exactly one FinishedRequestStats, each
//     user request exactly one (n, max generation tokens) observation;
//   - text already handed out is never taken back: text that could be the
//     start of a stop string is held back until it cannot be;
//   - Stream.Put never blocks: a slow reader merges deltas.
package output
