package stats

import "time"

// NewIterationStats starts the accumulator for one engine step's outputs.
// ts is the front end's clock when the step's outputs were received
// (vLLM IterationStats.iteration_timestamp); TTFT and e2e latency end there.
func NewIterationStats(ts time.Time) *IterationStats {
	return &IterationStats{IterationTimestamp: ts}
}

// UpdateFromPrefill adds one request's PrefillStats (handed over once, on
// its first output) to the iteration's prompt-token split. govllm has no KV
// connector, so every cached token is a local prefix-cache hit.
func (p *PromptTokenStats) UpdateFromPrefill(ps *PrefillStats) {
	cached := max(ps.NumCachedTokens, 0)
	p.Computed += ps.NumPromptTokens - cached
	p.LocalCacheHit += cached
	p.CachedTokens += cached
	p.Total += ps.NumPromptTokens
}

// OutputUpdate is what one engine-core output says about one request, in
// the terms IterationStats needs (the front end copies it from a
// sched.CoreOutput; stats imports nothing internal).
type OutputUpdate struct {
	NumNewTokens int
	Events       []Event
	PrefillStats *PrefillStats // non-nil on the request's first output only
	// EngineTimestamp is the step timestamp (sched.CoreOutputs.Timestamp):
	// the NEW_TOKENS time of every output in the step.
	EngineTimestamp time.Time
	// IsPrefilling is true for the request's first output.
	IsPrefilling bool
	// Pooled marks an embedding request's one output (its pooled vector,
	// no tokens): as in vLLM, its TTFT is observed and it stamps the first
	// and last "token" times, so prefill and inference time are measured
	// and decode time is 0.
	Pooled bool
	// RequestID names the request in the TTFT and inter-token samples
	// (the user request's id; a parallel-sampling child gives its parent's).
	RequestID string
}

// UpdateFromOutput folds one request's output into the iteration and into
// the request's own timing rs (vLLM IterationStats.update_from_output).
//
// Order as in vLLM: generation tokens; on the first output the prompt-token
// split and TTFT (iteration time − arrival); the events; then the token
// timestamps and inter-token latencies. With n > 1 new tokens in one output
// the gap since the previous output is spread evenly over the n tokens
// (n inter-token samples), so the ITL count is always tokens − 1.
//
// One guard vLLM lacks: an output carrying no token (a request aborted or
// failed before its first token, or a token-less finish) produces no TTFT
// and no inter-token sample and leaves the token timestamps alone, so a
// latency histogram never observes a token that was not produced.
func (it *IterationStats) UpdateFromOutput(u OutputUpdate, rs *RequestStateStats) {
	n := u.NumNewTokens
	it.NumGenerationTokens += n
	if u.IsPrefilling && u.PrefillStats != nil {
		it.PromptTokenStats.UpdateFromPrefill(u.PrefillStats)
	}
	rs.NumGenerationTokens += n
	if len(u.Events) > 0 {
		it.UpdateFromEvents(u.Events, rs)
	}
	if u.Pooled && u.IsPrefilling {
		ttft := Interval(rs.ArrivalTime, it.IterationTimestamp)
		it.addTTFT(ttft, u.RequestID)
		rs.FirstTokenLatency, rs.FirstTokenTime, rs.LastTokenTime = ttft, u.EngineTimestamp, u.EngineTimestamp
		return
	}
	if n == 0 {
		return
	}
	if rs.NumGenerationTokens == n { // this output carries the request's first token
		ttft := Interval(rs.ArrivalTime, it.IterationTimestamp)
		it.addTTFT(ttft, u.RequestID)
		rs.FirstTokenLatency = ttft
		rs.FirstTokenTime = u.EngineTimestamp
		n-- // the first token has no inter-token gap
	}
	if n > 0 {
		gap := Interval(rs.LastTokenTime, u.EngineTimestamp) / time.Duration(n)
		for range n {
			it.InterTokenLatenciesIter = append(it.InterTokenLatenciesIter, gap)
			it.InterTokenLatencyRequestIDs = append(it.InterTokenLatencyRequestIDs, u.RequestID)
		}
	}
	rs.LastTokenTime = u.EngineTimestamp
}

// addTTFT appends one TTFT sample and its request id.
func (it *IterationStats) addTTFT(d time.Duration, id string) {
	it.TimeToFirstTokensIter = append(it.TimeToFirstTokensIter, d)
	it.TimeToFirstTokenRequestIDs = append(it.TimeToFirstTokenRequestIDs, id)
}

// UpdateFromEvents applies engine-core events: QUEUED sets the queued time
// (the last one wins), SCHEDULED sets the scheduled time once (re-schedules
// after a preemption are ignored, as in vLLM), PREEMPTED counts a preemption
// in this iteration.
func (it *IterationStats) UpdateFromEvents(events []Event, rs *RequestStateStats) {
	for _, ev := range events {
		switch ev.Type {
		case EventQueued:
			rs.QueuedTime = ev.Time
		case EventScheduled:
			if rs.ScheduledTime.IsZero() {
				rs.ScheduledTime = ev.Time
			}
		case EventPreempted:
			it.NumPreemptedReqs++
		}
	}
}

// FinishInfo describes a request at its finish, for UpdateFromFinished.
type FinishInfo struct {
	Reason          FinishReason
	NumPromptTokens int
	MaxTokensParam  int // 0 when unset
	NumCachedTokens int
	ClientAbort     bool   // the client cancelled it (docs/metrics.md, decision 6)
	RequestID       string // the user request's id (a child's parent's)
}

// UpdateFromFinished appends the request's FinishedRequestStats, computed
// with the formulas of docs/metrics.md (vLLM
// IterationStats.update_from_finished_request):
//
//	e2e       = iteration time − arrival
//	queued    = first SCHEDULED − QUEUED
//	prefill   = first token − first SCHEDULED
//	decode    = last token − first token
//	inference = prefill + decode  (= last token − first SCHEDULED)
//	mean TPOT = decode / (generation tokens − 1), 0 with fewer than 2 tokens
//
// Every interval is clamped at 0 and is 0 when either end is missing.
// Inference is the sum of the clamped prefill and decode times so that
// inference == prefill + decode holds exactly for every request.
func (it *IterationStats) UpdateFromFinished(fi FinishInfo, rs *RequestStateStats) *FinishedRequestStats {
	prefill := Interval(rs.ScheduledTime, rs.FirstTokenTime)
	decode := Interval(rs.FirstTokenTime, rs.LastTokenTime)
	var tpot time.Duration
	if rs.NumGenerationTokens > 1 {
		tpot = decode / time.Duration(rs.NumGenerationTokens-1)
	}
	it.FinishedRequests = append(it.FinishedRequests, FinishedRequestStats{
		FinishReason:           fi.Reason,
		E2ELatency:             Interval(rs.ArrivalTime, it.IterationTimestamp),
		NumPromptTokens:        fi.NumPromptTokens,
		NumGenerationTokens:    rs.NumGenerationTokens,
		MaxTokensParam:         fi.MaxTokensParam,
		QueuedTime:             Interval(rs.QueuedTime, rs.ScheduledTime),
		PrefillTime:            prefill,
		InferenceTime:          prefill + decode,
		DecodeTime:             decode,
		MeanTimePerOutputToken: tpot,
		NumCachedTokens:        fi.NumCachedTokens,
		ClientAbort:            fi.ClientAbort,
		RequestID:              fi.RequestID,
	})
	return &it.FinishedRequests[len(it.FinishedRequests)-1]
}

// ObserveParent records a finished user request (a parallel-sampling
// parent, or a plain request with n = 1): n and the largest generation
// token count over its sequences (vLLM ParentRequest.observe_finished_request).
func (it *IterationStats) ObserveParent(n, maxGenerationTokens int) {
	it.NParamsIter = append(it.NParamsIter, n)
	it.MaxNumGenerationTokensIter = append(it.MaxNumGenerationTokensIter, maxGenerationTokens)
}

// NumIterationTokens is the iteration_tokens_total observation: prompt
// tokens first reported this iteration plus generation tokens. A step whose
// outputs carry no token (only aborts or failed adds) is not an engine
// iteration: it is not observed (vLLM's engine core emits no output there).
func (it *IterationStats) NumIterationTokens() int {
	return it.PromptTokenStats.Total + it.NumGenerationTokens
}

// PrefillKVComputedTokens is the prompt tokens whose KV was computed rather
// than found in the prefix cache: prompt − max(cached, 0), never negative.
func (f *FinishedRequestStats) PrefillKVComputedTokens() int {
	return max(f.NumPromptTokens-max(f.NumCachedTokens, 0), 0)
}

// Interval returns to − from, or 0 when either end is the zero time or the
// difference is negative. With both values from time.Now in one process
// the difference uses the monotonic clock.
func Interval(from, to time.Time) time.Duration {
	if from.IsZero() || to.IsZero() {
		return 0
	}
	return max(to.Sub(from), 0)
}
