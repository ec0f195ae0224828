package stats

import "time"

// PromptTokenStats splits one iteration's prompt tokens by source.
// Invariants: Computed+LocalCacheHit+ExternalKVTransfer == Total and
// LocalCacheHit+ExternalKVTransfer == CachedTokens.
type PromptTokenStats struct {
	Computed           int
	LocalCacheHit      int
	ExternalKVTransfer int // always 0 in govllm (no KV connector)
	CachedTokens       int
	Total              int
}

// PromptSources are the values of the prompt_tokens_by_source "source" label.
var PromptSources = []string{"local_compute", "local_cache_hit", "external_kv_transfer"}

// BySource returns the count for one of PromptSources.
func (p *PromptTokenStats) BySource(source string) int {
	switch source {
	case "local_compute":
		return p.Computed
	case "local_cache_hit":
		return p.LocalCacheHit
	case "external_kv_transfer":
		return p.ExternalKVTransfer
	}
	return 0
}

// RequestStateStats is the front end's per-request timing (vLLM RequestStateStats).
type RequestStateStats struct {
	ArrivalTime         time.Time // stamped by the caller before tokenization
	QueuedTime          time.Time // last QUEUED event
	ScheduledTime       time.Time // first SCHEDULED event
	FirstTokenTime      time.Time // step timestamp of the first output
	LastTokenTime       time.Time // step timestamp of the latest output
	FirstTokenLatency   time.Duration
	NumGenerationTokens int
}

// FinishedRequestStats describes one finished request (vLLM FinishedRequestStats).
type FinishedRequestStats struct {
	FinishReason           FinishReason
	E2ELatency             time.Duration
	NumPromptTokens        int
	NumGenerationTokens    int
	MaxTokensParam         int // 0 when unset
	QueuedTime             time.Duration
	PrefillTime            time.Duration
	InferenceTime          time.Duration
	DecodeTime             time.Duration
	MeanTimePerOutputToken time.Duration
	NumCachedTokens        int
	// RequestID is the user request's id (for a parallel-sampling child,
	// its parent's): the exemplar the stat loggers attach to the latency
	// observations (docs/metrics.md, exemplars). "" when unknown.
	RequestID string
	// ClientAbort is true for a request the client cancelled: govllm counts
	// it in request_success{abort} and the token histograms but not in the
	// latency histograms (docs/metrics.md, decision 6).
	ClientAbort bool
}

// IterationStats accumulates what one engine step's outputs say
// (vLLM IterationStats). One is filled per step by the output processor.
type IterationStats struct {
	IterationTimestamp         time.Time
	NumGenerationTokens        int
	PromptTokenStats           PromptTokenStats
	NumPreemptedReqs           int
	FinishedRequests           []FinishedRequestStats
	MaxNumGenerationTokensIter []int
	NParamsIter                []int
	TimeToFirstTokensIter      []time.Duration
	InterTokenLatenciesIter    []time.Duration
	// TimeToFirstTokenRequestIDs and InterTokenLatencyRequestIDs name the
	// request of each sample of the two slices above, index for index
	// (UpdateFromOutput appends to both). A producer that fills only the
	// samples leaves them shorter; a sample without an id ("" or missing)
	// gets no exemplar.
	TimeToFirstTokenRequestIDs  []string
	InterTokenLatencyRequestIDs []string
	// StructuredCompileTimesIter: one sample per request with a
	// structured-output constraint, on its first output: the time the front
	// end took to compile the constraint and start its states (a govllm
	// extension; vLLM has no such statistic).
	StructuredCompileTimesIter []time.Duration
	// StructuredMaskTimesIter: one sample per constrained sequence sampled
	// this step: the time to compute its token mask and apply it to the
	// logits (a govllm extension).
	StructuredMaskTimesIter []time.Duration
}

// Empty reports whether the step had nothing to say about requests (a
// stats-only step: no outputs, or outputs without tokens, finishes or
// preemptions). Every field but the timestamp is then its zero value.
func (it *IterationStats) Empty() bool {
	return it.NumGenerationTokens == 0 && it.PromptTokenStats == (PromptTokenStats{}) && it.NumPreemptedReqs == 0 &&
		len(it.FinishedRequests) == 0 && len(it.MaxNumGenerationTokensIter) == 0 && len(it.NParamsIter) == 0 &&
		len(it.TimeToFirstTokensIter) == 0 && len(it.InterTokenLatenciesIter) == 0 &&
		len(it.StructuredCompileTimesIter) == 0 && len(it.StructuredMaskTimesIter) == 0
}

// TTFTRequestID is the request id of TimeToFirstTokensIter[i], or "".
func (it *IterationStats) TTFTRequestID(i int) string { return idAt(it.TimeToFirstTokenRequestIDs, i) }

// ITLRequestID is the request id of InterTokenLatenciesIter[i], or "".
func (it *IterationStats) ITLRequestID(i int) string { return idAt(it.InterTokenLatencyRequestIDs, i) }

func idAt(ids []string, i int) string {
	if i < len(ids) {
		return ids[i]
	}
	return ""
}

// NumPromptTokens is the prompt tokens first reported this iteration.
func (it *IterationStats) NumPromptTokens() int { return it.PromptTokenStats.Total }
