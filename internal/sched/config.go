package sched

import (
	"errors"
	"fmt"
)

// Policy orders the waiting queue and picks preemption victims.
type Policy uint8

const (
	// FCFS serves requests in arrival order and preempts the newest running one.
	FCFS Policy = iota
	// Priority serves the lowest Priority value first (ties by arrival) and
	// preempts the highest value, latest arrival.
	Priority
)

func (p Policy) String() string {
	switch p {
	case FCFS:
		return "fcfs"
	case Priority:
		return "priority"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// ParsePolicy parses "fcfs" or "priority".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "fcfs":
		return FCFS, nil
	case "priority":
		return Priority, nil
	}
	return 0, fmt.Errorf("%w: unknown scheduling policy %q (want fcfs or priority)", ErrInvalidConfig, s)
}

// ErrInvalidConfig is wrapped by every Config.Validate error.
var ErrInvalidConfig = errors.New("sched: invalid config")

// Config bounds what one step may schedule (vLLM SchedulerConfig).
type Config struct {
	// MaxNumSeqs caps the number of running requests.
	MaxNumSeqs int
	// MaxNumBatchedTokens is the per-step token budget.
	MaxNumBatchedTokens int
	// MaxModelLen caps prompt + output tokens of one request.
	MaxModelLen int
	Policy      Policy
	// LongPrefillTokenThreshold, when > 0, caps the tokens one request may
	// prefill in a single step.
	LongPrefillTokenThreshold int
	// EnableChunkedPrefill lets a prompt that does not fit the remaining
	// budget be split across steps.
	EnableChunkedPrefill bool
	// Speculative, when set, drafts tokens for every decoding request each
	// step (speculative decoding): the step feeds them after the request's
	// last token and the runner keeps those the model itself samples.
	Speculative *Speculative
	// FastForward drafts, for a request under a structured-output
	// constraint that implements ForcedDrafter, the tokens of the text the
	// constraint forces next (up to Speculative.NumTokens, or
	// FastForwardTokens without speculative decoding), verified like any
	// draft: the outputs do not change, the steps they take do.
	FastForward bool
}

// FastForwardTokens bounds a fast-forward draft without speculative
// decoding.
const FastForwardTokens = 8

// ForcedDrafter is a structured-output constraint that can spell the
// tokens of the text it forces next (fast-forward): up to k, none when
// the next token is the model's to choose.
type ForcedDrafter interface {
	ForcedTokens(dst []int32, k int) []int32
}

// Drafter proposes the tokens that follow a decoding request's sequence.
// Propose returns up to k tokens to follow tokens (request id's prompt and
// output), reusing dst; none is a valid answer. Forget drops whatever the
// drafter keeps for request id (a draft model's KV cache): the scheduler
// calls it when the request finishes, is aborted or preempted. Both run
// on the scheduler's goroutine, inside Schedule and the calls that end a
// request.
type Drafter interface {
	Propose(id RequestID, dst, tokens []int32, k int) []int32
	Forget(id RequestID)
}

// DraftFunc is a Drafter that keeps nothing per request (the n-gram
// proposer): it ignores the request id.
type DraftFunc func(dst, tokens []int32, k int) []int32

// Propose calls f.
func (f DraftFunc) Propose(_ RequestID, dst, tokens []int32, k int) []int32 { return f(dst, tokens, k) }

// Forget does nothing.
func (DraftFunc) Forget(RequestID) {}

// Speculative configures speculative decoding (vLLM SpeculativeConfig).
type Speculative struct {
	Drafter Drafter
	// NumTokens is k: the most tokens drafted for a request per step. A
	// request drafts fewer after drafts it did not accept (see adaptSpec).
	NumTokens int
}

// DefaultConfig returns 128 sequences, a 2048-token budget, a 2048-token
// model length, FCFS and chunked prefill on.
func DefaultConfig() Config {
	return Config{
		MaxNumSeqs:           128,
		MaxNumBatchedTokens:  2048,
		MaxModelLen:          2048,
		Policy:               FCFS,
		EnableChunkedPrefill: true,
	}
}

// Validate reports a configuration error wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case c.MaxNumSeqs < 1:
		return bad("max num seqs must be at least 1, got %d", c.MaxNumSeqs)
	case c.MaxNumBatchedTokens < 1:
		return bad("max num batched tokens must be at least 1, got %d", c.MaxNumBatchedTokens)
	case c.MaxModelLen < 2:
		return bad("max model len must be at least 2, got %d", c.MaxModelLen)
	case c.Policy != FCFS && c.Policy != Priority:
		return bad("unknown policy %d", c.Policy)
	case c.LongPrefillTokenThreshold < 0:
		return bad("long prefill token threshold must be ≥ 0, got %d", c.LongPrefillTokenThreshold)
	case !c.EnableChunkedPrefill && c.MaxNumBatchedTokens < c.MaxModelLen:
		return bad("max num batched tokens (%d) is smaller than max model len (%d) with chunked prefill off: long prompts could never be scheduled",
			c.MaxNumBatchedTokens, c.MaxModelLen)
	case !c.EnableChunkedPrefill && c.LongPrefillTokenThreshold > 0:
		return bad("long prefill token threshold needs chunked prefill")
	case c.Speculative != nil && (c.Speculative.Drafter == nil || c.Speculative.NumTokens < 1):
		return bad("speculative decoding needs a drafter and at least 1 token, got %d", c.Speculative.NumTokens)
	case c.MaxNumBatchedTokens < c.MaxNumSeqs:
		return bad("max num batched tokens (%d) is smaller than max num seqs (%d)", c.MaxNumBatchedTokens, c.MaxNumSeqs)
	}
	return nil
}
