// Package sched is the scheduler: the request state machine (waiting,
// running, preempted, finished), FCFS and priority policies, the per-step
// token budget, chunked prefill, preemption by recompute, stop-token and
// length checks, engine-core events and the SchedulerStats snapshot.
//
// vLLM counterpart: vllm/v1/core/sched/scheduler.py, vllm/v1/request.py.
// Imports: kvcache, sampling, stats. Never net/http, Prometheus, the
// tokenizer or the environment. The scheduler sees token ids only.
package sched
