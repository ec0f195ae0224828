package stats

import (
	"fmt"
	"time"
)

// FinishReason says why a request finished. FinishNone means it has not.
type FinishReason uint8

const (
	FinishNone FinishReason = iota
	FinishStop
	FinishLength
	FinishAbort
	FinishError
	FinishRepetition
)

// FinishReasons lists every reason a finished request can carry, in the
// order of the finished_reason label values.
var FinishReasons = []FinishReason{FinishStop, FinishLength, FinishAbort, FinishError, FinishRepetition}

// String returns the label value vLLM uses ("stop", "length", ...), or "" for FinishNone.
func (r FinishReason) String() string {
	switch r {
	case FinishNone:
		return ""
	case FinishStop:
		return "stop"
	case FinishLength:
		return "length"
	case FinishAbort:
		return "abort"
	case FinishError:
		return "error"
	case FinishRepetition:
		return "repetition"
	}
	return fmt.Sprintf("FinishReason(%d)", uint8(r))
}

// EventType is an engine-core request event (vLLM EngineCoreEventType).
type EventType uint8

const (
	EventQueued EventType = iota + 1
	EventScheduled
	EventPreempted
)

func (t EventType) String() string {
	switch t {
	case EventQueued:
		return "QUEUED"
	case EventScheduled:
		return "SCHEDULED"
	case EventPreempted:
		return "PREEMPTED"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is one engine-core event with its monotonic timestamp.
type Event struct {
	Type EventType
	Time time.Time
}

// PrefixCacheStats are prefix-cache lookups since the last snapshot
// (per-step deltas). Only the non-preempted fields are exported as metrics.
type PrefixCacheStats struct {
	Reset             bool
	Requests          int
	Queries           int // tokens queried
	Hits              int // tokens found cached
	PreemptedRequests int
	PreemptedQueries  int
	PreemptedHits     int
}

// Record adds one lookup of numTokens tokens of which numHits were cached.
func (p *PrefixCacheStats) Record(numTokens, numHits int, preempted bool) {
	if preempted {
		p.PreemptedRequests++
		p.PreemptedQueries += numTokens
		p.PreemptedHits += numHits
		return
	}
	p.Requests++
	p.Queries += numTokens
	p.Hits += numHits
}

// SchedulerStats is the scheduler's snapshot after a step (vLLM make_stats()).
type SchedulerStats struct {
	NumRunningReqs        int
	NumWaitingReqs        int     // waiting for capacity
	NumSkippedWaitingReqs int     // deferred; always 0 in govllm today
	KVCacheUsage          float64 // fraction of KV blocks in use, 0..1
	PrefixCacheStats      PrefixCacheStats
	// SpecDecoding counts the step's speculative drafts (nil when the step
	// verified none).
	SpecDecoding *SpecDecodingStats
}

// SpecDecodingStats are one step's speculative-decoding counts (vLLM
// SpecDecodingStats): every sequence that fed drafted tokens is one draft.
type SpecDecodingStats struct {
	NumDrafts         int
	NumDraftTokens    int
	NumAcceptedTokens int
	// NumAcceptedPerPos[i] counts the drafts whose token at position i
	// was accepted (num_speculative_tokens entries).
	NumAcceptedPerPos []int
}

// Observe adds one draft of numDraft tokens of which the first
// numAccepted were accepted.
func (s *SpecDecodingStats) Observe(numDraft, numAccepted int) {
	s.NumDrafts++
	s.NumDraftTokens += numDraft
	s.NumAcceptedTokens += numAccepted
	for i := 0; i < numAccepted && i < len(s.NumAcceptedPerPos); i++ {
		s.NumAcceptedPerPos[i]++
	}
}

// PrefillStats is handed over once per request, on its first output.
type PrefillStats struct {
	NumPromptTokens   int
	NumCachedTokens   int // local + external
	NumComputedTokens int // prompt − cached
}

// NewPrefillStats builds PrefillStats for a prompt with localCached tokens
// found in the prefix cache.
func NewPrefillStats(numPromptTokens, localCached int) PrefillStats {
	return PrefillStats{
		NumPromptTokens:   numPromptTokens,
		NumCachedTokens:   localCached,
		NumComputedTokens: numPromptTokens - localCached,
	}
}
