// Package core is the engine core: it owns a Scheduler and drives steps
// (schedule → execute → update) through an Executor it does not implement.
//
// vLLM counterpart: vllm/v1/engine/core.py (EngineCore.step and its busy
// loop). Imports: sched, kvcache, stats, sampling. Never the runner (the
// Executor interface is defined here and the command passes the runner in),
// net/http, Prometheus, the tokenizer or the environment.
//
// Like etcd raft's RawNode versus node.run: Engine's methods (AddRequest,
// Abort, HasWork, Step) are synchronous and not safe for concurrent use;
// Run is the one goroutine that owns an Engine, takes Commands from a
// channel and emits every step's CoreOutputs on another. Do not call other
// methods while Run is running.
//
// Invariants: every Step returns a SchedulerStats snapshot, even when no
// request produced output; Run emits one extra stats-only CoreOutputs after
// the last request leaves, so gauges return to 0; an Executor error is
// sticky (the engine is dead and every later Step fails with ErrEngineDead),
// except an Execute that fails because Step's own context was cancelled.
package core
