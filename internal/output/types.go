package output

import (
	"fmt"
	"time"

	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// Kind selects what each RequestOutput carries (vLLM RequestOutputKind).
// The zero value is Delta.
type Kind uint8

const (
	// Delta: the text, token ids and logprobs new since the previous output
	// (streaming). Only sequences with news appear.
	Delta Kind = iota
	// Cumulative: everything so far, for all n sequences, at every step.
	Cumulative
	// FinalOnly: one output, when every sequence has finished.
	FinalOnly
)

func (k Kind) String() string {
	switch k {
	case Delta:
		return "delta"
	case Cumulative:
		return "cumulative"
	case FinalOnly:
		return "final_only"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// RequestOutput is one user request's news (vLLM RequestOutput).
type RequestOutput struct {
	RequestID      string
	PromptTokenIDs []int32
	// Outputs holds one entry per sequence that has news (Index says
	// which); all n when Cumulative or FinalOnly.
	Outputs         []CompletionOutput
	Finished        bool // every sequence finished
	NumCachedTokens int  // prompt tokens found in the prefix cache
	// PromptLogprobs, when the request asked for them, holds one entry per
	// prompt token after the first (entry j scores token j+1); in Delta
	// mode only the first output that has them carries them.
	PromptLogprobs []sampling.Logprobs
}

// CompletionOutput is one sequence's part of a RequestOutput.
type CompletionOutput struct {
	Index        int
	Text         string // delta or cumulative text per Kind
	TokenIDs     []int32
	Logprobs     []sampling.Logprobs
	FinishReason stats.FinishReason // FinishNone until this sequence finished
	// StopReason is nil, the matched stop string (string), or the stop
	// token id that finished the sequence (int32).
	StopReason any
	// Pooled is an embedding request's vector, once it finished.
	Pooled []float32
	// Timings are the sequence's statistics as the stat loggers recorded
	// them, once it finished (nil when no statistics are collected).
	Timings *Timings
}

// Timings are a finished sequence's statistics: what the stat loggers
// observed for it.
type Timings struct {
	stats.FinishedRequestStats
	TimeToFirstToken time.Duration // its TTFT observation (0 when it produced nothing)
}

// ChildID is the engine request id of sequence index of a user request
// with n sequences: the user id itself when n == 1, "<id>-<index>" otherwise.
func ChildID(id string, index, n int) sched.RequestID {
	if n == 1 {
		return sched.RequestID(id)
	}
	return sched.RequestID(fmt.Sprintf("%s-%d", id, index))
}

// ChildParams returns the sampling parameters of sequence index: n = 1,
// and with a seed, seed + index so that sequences differ
// (vLLM ParentRequest._get_child_sampling_params).
func ChildParams(p sampling.Params, index int) sampling.Params {
	c := p
	c.N = 1
	if p.Seed != nil {
		s := *p.Seed + int64(index)
		c.Seed = &s
	}
	return c
}
