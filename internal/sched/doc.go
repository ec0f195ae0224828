// Package sched is the scheduler: the request state machine (waiting,
// running, preempted, finished), FCFS and priority policies, the per-step
// token budget, chunked prefill, preemption by recompute, stop-token and
// length checks, engine-core events and the SchedulerStats snapshot. An
// embedding request (EngineRequest.Pooling) is scheduled as any prefill and
// finishes with FinishStop once its prompt is computed, its output carrying
// the pooled vector; MEAN and CLS pooling skip prefix-cache hits.
//
// vLLM counterpart: vllm/v1/core/sched/scheduler.py, vllm/v1/request.py.
// Imports: kvcache, pooling, sampling, stats. Never net/http, Prometheus, the
// tokenizer or the environment. The scheduler sees token ids only.
//
// # A step
//
// Schedule takes one timestamp, then serves running requests first (decodes
// and continuing prefill chunks) within MaxNumBatchedTokens; when the KV cache
// cannot grow a running request it preempts by recompute (FCFS: the newest
// running request; Priority: the highest Priority value, latest arrival):
// blocks freed, NumComputedTokens reset to 0, back to the front of the
// waiting queue, a PREEMPTED event (unlike vLLM, when a request had to
// preempt itself the running requests after it are still served). If
// nothing was preempted it then admits
// waiting requests (prefix-cache lookup over prompt + generated tokens,
// chunked prefill, MaxNumSeqs) with a SCHEDULED event — a prefix-cache
// lookup counts in the stats only when the request is admitted, so a
// request blocked at the head of the queue for many steps counts once
// (vLLM counts every attempt, inflating queries under memory pressure); a
// request's
// PrefillStats are set the first time it is scheduled. Every scheduled
// request registers the full blocks its step writes in the prefix cache at
// once (vLLM's allocate_slots → cache_blocks), so a request admitted later
// in the same step hits them: n > 1 sequences and parallel requests with a
// shared system prompt compute the shared blocks once (the forward pass
// writes a layer's K/V for the whole batch before any token attends, and the
// writer comes first in the batch). Blocks registered for a step that does
// not run them leave the cache: a preempted writer's on Free, all of them in
// AbandonStep, which also sends requests that hit them back to waiting. The
// executor runs the SchedulerOutput; UpdateFromOutput commits the step's
// blocks, advances computed tokens, appends sampled tokens and checks stops:
// EOS (unless IgnoreEOS) and stop token ids once MinTokens are out, then
// MaxTokens, then MaxModelLen.
//
// # Outputs and events
//
// A request gets a CoreOutput only when it sampled a token or finished
// (never for a partial prefill chunk). Its events since its previous output
// (QUEUED, SCHEDULED, PREEMPTED) and, on its first output only, its
// PrefillStats ride on that output. Abort finishes a request at once (blocks
// freed immediately) and queues one CoreOutput{FinishReason: FinishAbort}
// with its pending events (and PrefillStats if not yet delivered) for the
// next UpdateFromOutput; this is how client cancellations reach the stats. A
// consumer that already finished the request itself (a stop string) ignores
// outputs for requests it no longer tracks, as vLLM's output processor does.
// CoreOutput.NewTokenIDs alias the request's token storage: read-only. Every UpdateFromOutput carries a
// SchedulerStats snapshot taken after finished requests left the queues.
// KV usage is 1 − free/NumBlocks (kvcache keeps no null block).
//
// Stop strings are matched by the front end, on text: CoreOutputs.StopCheck
// says that a step gave a token to an unfinished request with stop strings,
// so a loop that runs the core ahead of its front end (core.Run) must hear
// the front end's answer (and its aborts) before the next Schedule, or a
// sequence a stop string finished is computed for nothing.
//
// # Invariants
//
// Every unfinished request is in exactly one of running or waiting; running
// requests hold blocks covering their computed tokens; waiting (new or
// preempted) requests hold no blocks and have 0 computed tokens; len(running)
// ≤ MaxNumSeqs. CheckInvariants verifies this and the KV manager's
// invariants; built with the `invariants` tag, each mutating method calls it.
//
// A Scheduler is not safe for concurrent use; core.Engine drives it.
package sched
