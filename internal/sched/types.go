package sched

import (
	"time"

	"govllm/internal/kvcache"
	"govllm/internal/pooling"
	"govllm/internal/sampling"
	"govllm/internal/stats"
)

// RequestID identifies one engine request (one sequence; a parallel-sampling
// parent with n > 1 is n engine requests).
type RequestID string

// EngineRequest is what a front end hands the engine core: token ids only.
type EngineRequest struct {
	ID             RequestID
	PromptTokenIDs []int32
	Params         sampling.Params
	EOSTokenID     int32 // -1 when the model has none
	Priority       int   // lower runs first under the priority policy
	ArrivalTime    time.Time
	// Constraint, when set, limits the tokens this sequence may sample
	// (structured outputs); the scheduler advances it by each sampled token.
	Constraint sampling.Constraint
	// Pooling, when set, makes this an embedding request (vLLM's pooling
	// request): prefill only, no token is sampled, and it finishes with
	// FinishStop after its prompt, its output carrying the pooled vector.
	// MEAN and CLS pooling compute every prompt token (no prefix-cache
	// hits). Params.MaxTokens must still be at least 1 (vLLM sets 1).
	Pooling *pooling.Params
}

// ScheduledRequest is one request's share of a step, in the flattened batch
// order. Slices alias scheduler-owned state and are valid only during Execute.
type ScheduledRequest struct {
	ID RequestID
	// TokenIDs are the tokens fed this step: all tokens [Start, Start+len).
	TokenIDs []int32
	// Start is the position of TokenIDs[0] (= num computed tokens before the step).
	Start int
	// BlockTable maps the request's logical blocks to physical blocks; it
	// covers at least Start+len(TokenIDs) tokens.
	BlockTable []kvcache.BlockID
	// Sample is true when this step reaches the end of the known tokens, so a
	// new token is sampled after the last fed token (false for a partial
	// prefill chunk).
	Sample bool
	// SpecTokenIDs are the drafted tokens of a speculative step: the last
	// len(SpecTokenIDs) of TokenIDs, after the request's last known token.
	// The runner samples after each fed token and keeps the samples while
	// each equals the draft after it (RunnerOutput.SpecTokenIDs).
	SpecTokenIDs []int32
	Params       *sampling.Params
	// Constraint, when set, is the sequence's structured-output state after
	// its output so far: the runner samples only tokens its Mask allows.
	Constraint sampling.Constraint
	// PromptTokenIDs and OutputTokenIDs feed penalties and seeded sampling.
	PromptTokenIDs []int32
	OutputTokenIDs []int32
	// PromptLogprobsStart and PromptLogprobsEnd are the positions [start,
	// end) of this step whose logits score the prompt token after them
	// (prompt logprobs); equal when none.
	PromptLogprobsStart, PromptLogprobsEnd int
	// Pool, for an embedding request, takes the final hidden states of
	// this step's tokens (the runner feeds it); nothing is sampled, and
	// when Sample is set (the prompt's last chunk) the runner returns its
	// Result in RunnerOutput.Pooled.
	Pool *pooling.Acc
}

// SchedulerOutput is one step's plan (vLLM SchedulerOutput).
type SchedulerOutput struct {
	Requests                []ScheduledRequest
	TotalNumScheduledTokens int
}

// RunnerOutput is the executor's result, aligned with SchedulerOutput.Requests.
type RunnerOutput struct {
	// SampledTokenIDs[i] is the token sampled for Requests[i], or -1 when
	// Requests[i].Sample was false.
	SampledTokenIDs []int32
	// Logprobs[i] is non-nil when Requests[i] asked for logprobs and sampled.
	Logprobs []*sampling.Logprobs
	// SpecTokenIDs[i], for a request with drafts, holds the tokens sampled
	// after SampledTokenIDs[i] in the same step: while the token sampled at
	// a position equals the draft fed after it, the draft is accepted and
	// the next position is sampled too. Its length is the number of
	// accepted drafts; SpecLogprobs[i] aligns with it when logprobs were
	// asked for. Both nil when no request of the step had drafts.
	SpecTokenIDs [][]int32
	SpecLogprobs [][]*sampling.Logprobs
	// PromptLogprobs[i] holds, when Requests[i] has a prompt-logprobs range,
	// the logprobs of the prompt token after each position of the range.
	// Nil when no request of the step has one.
	PromptLogprobs [][]*sampling.Logprobs
	// MaskTimes holds, for each token mask computed this step for a request
	// under a structured-output constraint (in no particular order: one per
	// sampled position, so a speculative step may compute several), the
	// time it took to compute and apply.
	MaskTimes []time.Duration
	// Pooled[i] is the pooled vector of Requests[i] when it is an
	// embedding request (Pool set) at its last chunk; nil when no
	// request of the step is one.
	Pooled [][]float32
}

// CoreOutput is one request's news from one step (vLLM EngineCoreOutput).
// An output exists only when there are new tokens or the request finished.
type CoreOutput struct {
	ReqID       RequestID
	NewTokenIDs []int32              // read-only: may alias scheduler storage
	NewLogprobs []*sampling.Logprobs // aligned with NewTokenIDs when requested
	// PromptLogprobs rides on the request's first output when it asked for
	// prompt logprobs: entry j scores prompt token j+1.
	PromptLogprobs []*sampling.Logprobs
	FinishReason   stats.FinishReason
	StopReason     int32 // the stop token id that finished it, or -1
	// Events are the QUEUED / SCHEDULED / PREEMPTED events recorded since
	// this request's previous output.
	Events []stats.Event
	// PrefillStats rides on the request's first output only.
	PrefillStats *stats.PrefillStats
	// Pooled is an embedding request's vector, on its one (finishing)
	// output; it has no NewTokenIDs.
	Pooled []float32
}

// CoreOutputs is everything one engine step produced (vLLM EngineCoreOutputs).
type CoreOutputs struct {
	Outputs        []CoreOutput
	SchedulerStats *stats.SchedulerStats
	// Timestamp is taken when the step's outputs are assembled (after the
	// forward pass and sampling): the NEW_TOKENS time of every output.
	Timestamp time.Time
	// StopCheck is true when Outputs hold a token of an unfinished request
	// with stop strings (past its MinTokens): only the front end can tell
	// whether the text now ends with one, and the core must hear its answer
	// before it schedules that request again.
	StopCheck bool
	// MaskTimes are the runner's structured-output mask times of the step
	// (RunnerOutput.MaskTimes), for the statistics.
	MaskTimes []time.Duration
}
