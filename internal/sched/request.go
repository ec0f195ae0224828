package sched

import (
	"fmt"
	"time"

	"govllm/internal/kvcache"
	"govllm/internal/pooling"
	"govllm/internal/sampling"
	"govllm/internal/stats"
)

// Status is a request's place in the state machine:
//
//	Waiting ──schedule──► Running ──stop/length──► Finished
//	   ▲                   │  ▲
//	   │                   │  └──schedule── Preempted ◄─┐
//	   │                   └──no KV blocks──────────────┘
//	   └── abort from any non-finished state ──► Finished(abort)
type Status uint8

const (
	StatusWaiting Status = iota
	StatusRunning
	StatusPreempted
	StatusFinished
)

func (s Status) String() string {
	switch s {
	case StatusWaiting:
		return "waiting"
	case StatusRunning:
		return "running"
	case StatusPreempted:
		return "preempted"
	case StatusFinished:
		return "finished"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Request is the scheduler's state of one engine request (vLLM Request).
// The scheduler owns it; callers may read it between steps.
type Request struct {
	ID          RequestID
	Params      sampling.Params
	EOSTokenID  int32
	Priority    int
	ArrivalTime time.Time
	constraint  sampling.Constraint // nil: unconstrained
	pool        *pooling.Acc        // nil unless an embedding request

	Status       Status
	FinishReason stats.FinishReason
	StopReason   int32 // the stop token id that finished it, or -1

	// NumComputedTokens tokens of AllTokenIDs have their KV in the cache.
	NumComputedTokens int
	NumPromptTokens   int
	NumPreemptions    int

	allTokens []int32 // prompt + output, append-only
	// blockTable is the table the KV manager last returned for this request
	// (nil when it holds no blocks): the scheduler skips AllocateSlots when
	// it already covers a step.
	blockTable []kvcache.BlockID
	seq        uint64 // arrival order, breaks ties

	// promptLogprobs gathers the prompt logprobs of the chunks computed so
	// far (prompt logprobs), until the first output carries them; their
	// count is the next prompt position to score.
	promptLogprobs     []*sampling.Logprobs
	promptLogprobsSent bool

	// Speculative decoding: spec holds this step's drafts and specFeed the
	// tokens fed with them (the last known token, then the drafts); specK
	// is how many tokens it drafts now, specMisses its drafts in a row with
	// none accepted, specSkip the steps it still waits before drafting.
	spec, specFeed              []int32
	specK, specMisses, specSkip int
	// specForced: this step's drafts are fast-forward's (the forced text
	// of its constraint), which back off on their own counters.
	specForced               bool
	forcedMisses, forcedSkip int

	events       []stats.Event
	prefillStats *stats.PrefillStats
	prefillSet   bool
	heapIndex    int
}

// AllTokenIDs is prompt + output (read-only).
func (r *Request) AllTokenIDs() []int32 { return r.allTokens }

// PromptTokenIDs is the prompt (read-only).
func (r *Request) PromptTokenIDs() []int32 { return r.allTokens[:r.NumPromptTokens:r.NumPromptTokens] }

// OutputTokenIDs is the generated tokens so far (read-only).
func (r *Request) OutputTokenIDs() []int32 { return r.allTokens[r.NumPromptTokens:] }

// NumTokens is prompt + output length.
func (r *Request) NumTokens() int { return len(r.allTokens) }

// NumOutputTokens is the number of generated tokens.
func (r *Request) NumOutputTokens() int { return len(r.allTokens) - r.NumPromptTokens }

func (r *Request) recordEvent(t stats.EventType, ts time.Time) {
	r.events = append(r.events, stats.Event{Type: t, Time: ts})
}

func (r *Request) takeEvents() []stats.Event {
	ev := r.events
	r.events = nil
	return ev
}

// promptLogprobsRange returns the positions [start, end) of a step feeding
// positions [from, from+n) whose logits score a prompt token not scored yet
// (the position before each prompt token after the first); empty when the
// request wants no prompt logprobs or has had them.
func (r *Request) promptLogprobsRange(from, n int) (start, end int) {
	if r.Params.PromptLogprobs == nil || r.promptLogprobsSent {
		return 0, 0
	}
	start, end = max(from, len(r.promptLogprobs)), min(from+n, r.NumPromptTokens-1)
	if start >= end {
		return 0, 0
	}
	return start, end
}

// takePromptLogprobs returns the prompt logprobs for the request's first
// output (nil for any later one or when none were asked for).
func (r *Request) takePromptLogprobs() []*sampling.Logprobs {
	if r.Params.PromptLogprobs == nil || r.promptLogprobsSent {
		return nil
	}
	r.promptLogprobsSent = true
	pl := r.promptLogprobs
	r.promptLogprobs = nil
	if pl == nil {
		pl = []*sampling.Logprobs{} // a one-token prompt has none to score
	}
	return pl
}

func (r *Request) takePrefillStats() *stats.PrefillStats {
	ps := r.prefillStats
	r.prefillStats = nil
	return ps
}

// readsPrefixCache reports whether r may start from cached prefix blocks:
// not an embedding request that pools every token (MEAN, CLS), whose
// cached tokens would have no hidden states, nor a request asking for
// prompt logprobs, whose every prompt position must be computed (vLLM too).
func (r *Request) readsPrefixCache() bool {
	if r.Params.PromptLogprobs != nil {
		return false
	}
	return r.pool == nil || !r.pool.Params().Type.NeedsAllTokens()
}

// IsPooling reports whether r is an embedding request.
func (r *Request) IsPooling() bool { return r.pool != nil }

// before is the priority order: lower Priority, then earlier arrival.
func (r *Request) before(o *Request) bool {
	if r.Priority != o.Priority {
		return r.Priority < o.Priority
	}
	if !r.ArrivalTime.Equal(o.ArrivalTime) {
		return r.ArrivalTime.Before(o.ArrivalTime)
	}
	return r.seq < o.seq
}
