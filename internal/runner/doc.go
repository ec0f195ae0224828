// Package runner is the CPU model runner: it owns the physical paged KV
// cache (model.KVCache, indexed by the block ids the kvcache package hands
// out) and a forward workspace, turns each sched.SchedulerOutput into one
// flattened model.Batch (prefill chunks and decodes together), runs the
// forward pass, samples every row that finished its known tokens with the
// request's sampling.Params, and returns the sched.RunnerOutput aligned with
// the scheduled requests. An embedding request (ScheduledRequest.Pool) is
// never sampled: the model writes its tokens' final hidden states
// (model.Seq.Hidden), the runner adds them to its pooling.Acc, and at the
// prompt's last chunk returns the pooled vector (RunnerOutput.Pooled).
// *Runner satisfies core's Executor interface.
//
// vLLM counterpart: vllm/v1/worker/cpu_model_runner.py and
// gpu_model_runner.py (_prepare_inputs, execute_model, sampling).
//
// Imports: model, tensor, sampling, pooling, sched (wire types). Never
// net/http, Prometheus, the tokenizer, or the environment.
//
// Invariants:
//   - The runner keeps no per-request state: everything a step needs rides
//     on the SchedulerOutput (an embedding's accumulator belongs to the
//     scheduler's request and starts over at position 0), so preemption
//     and abort need no bookkeeping here (vLLM's
//     SchedulerOutput.finished_req_ids has no counterpart).
//   - A seeded request's draw for output token i uses
//     sampling.SeededRNG(seed, i), so its tokens do not depend on batch mates
//     or preemption; unseeded requests draw from one runner-wide generator
//     (Config.Seed), whose per-row states are taken in request order before
//     sampling runs in parallel.
//   - min_tokens masks Config.EOSTokenID (the model's EOS) and the request's
//     stop token ids.
//   - Execute is called from one goroutine at a time (the engine loop).
//
// Tests: invariance_test.go runs requests alone and batched through a real
// core.Engine (prefix caching on/off, chunked prefill, preemption; greedy
// and seeded) and requires identical tokens. Throughput:
//
//	go test -bench Engine -benchtime 1x -run '^$' ./internal/runner
//
// reports generated tok/s at 1/8/32/64 sequences on a random-weight
// stories110m-shape model (F32, Q8_0) and the per-step time outside the
// forward pass (ns/step-outside-fwd, of which ns/step-sample).
//
//	go test -bench DecodeStep -benchtime 5x -run '^$' ./internal/runner
//
// times one 64-request decode Execute (stories110m, and tinyllama-1.1b F32
// and Q8_0 shapes; temperature and greedy) and splits it into the forward
// pass by phase (Runner.TimePhases: %matmul, %attn, %rows, %logits) and
// sampling (%sample), with CPU time per step.
package runner
