package sched

import (
	"errors"
	"fmt"
	"slices"

	"govllm/internal/sampling"
	"govllm/internal/stats"
)

// ErrBadRunnerOutput is wrapped by CheckRunnerOutput errors.
var ErrBadRunnerOutput = errors.New("sched: bad runner output")

// CheckRunnerOutput verifies that ro answers so: one sampled token (≥ 0) per
// request that samples, -1 otherwise.
func CheckRunnerOutput(so *SchedulerOutput, ro *RunnerOutput) error {
	if len(so.Requests) == 0 {
		return nil
	}
	if ro == nil {
		return fmt.Errorf("%w: nil output for %d requests", ErrBadRunnerOutput, len(so.Requests))
	}
	if len(ro.SampledTokenIDs) != len(so.Requests) {
		return fmt.Errorf("%w: %d sampled tokens for %d requests", ErrBadRunnerOutput, len(ro.SampledTokenIDs), len(so.Requests))
	}
	if ro.Logprobs != nil && len(ro.Logprobs) != len(so.Requests) {
		return fmt.Errorf("%w: %d logprobs for %d requests", ErrBadRunnerOutput, len(ro.Logprobs), len(so.Requests))
	}
	for i := range so.Requests {
		if tok := ro.SampledTokenIDs[i]; so.Requests[i].Sample && tok < 0 {
			return fmt.Errorf("%w: request %q sampled token %d", ErrBadRunnerOutput, so.Requests[i].ID, tok)
		}
	}
	return nil
}

// AbandonStep undoes the hand-off of so, the current step's plan, when the
// executor did not run it (its context was cancelled): the finished ids go
// back for the next step. Nothing else needs undoing: computed tokens only
// advance in UpdateFromOutput and blocks are registered in the prefix cache
// only there, so the next Schedule plans the same tokens again (in the
// blocks already allocated for them).
func (s *Scheduler) AbandonStep(so *SchedulerOutput) {
	if so != &s.out {
		return
	}
	s.finishedIDs = append(s.finishedIDs, so.FinishedReqIDs...)
	so.FinishedReqIDs = so.FinishedReqIDs[:0]
	so.Requests = so.Requests[:0]
	clear(s.scheduled)
	s.scheduled = s.scheduled[:0]
	s.assertInvariants()
}

// UpdateFromOutput applies one executed step (ro may be nil when nothing was
// scheduled): it advances computed tokens, caches newly full blocks, appends
// sampled tokens, checks stop conditions, frees finished requests and builds
// one CoreOutput per request that got a token or finished (pending aborts
// first). SchedulerStats is attached to every call's result; Timestamp is
// taken here, after the forward pass. ro must satisfy CheckRunnerOutput.
func (s *Scheduler) UpdateFromOutput(so *SchedulerOutput, ro *RunnerOutput) CoreOutputs {
	var outs []CoreOutput
	if n := len(s.abortOutputs) + len(so.Requests); n > 0 {
		outs = make([]CoreOutput, 0, n)
	}
	outs = append(outs, s.abortOutputs...)
	clear(s.abortOutputs)
	s.abortOutputs = s.abortOutputs[:0]

	anyFinished := false
	for i := range so.Requests {
		sr := &so.Requests[i]
		r := s.scheduledRequest(so, i)
		if r == nil || r.Status != StatusRunning {
			continue // aborted after Schedule
		}
		before := r.NumComputedTokens
		r.NumComputedTokens += len(sr.TokenIDs)
		if bs := s.kv.BlockSize(); r.NumComputedTokens/bs > before/bs {
			// A block filled up: register it in the prefix cache.
			s.kv.CacheFullBlocks(string(r.ID), r.allTokens, r.NumComputedTokens)
		}
		if !sr.Sample {
			continue // partial prefill: no output
		}
		r.allTokens = append(r.allTokens, ro.SampledTokenIDs[i])
		s.checkStop(r)
		n := len(r.allTokens)
		o := CoreOutput{
			ReqID:        r.ID,
			NewTokenIDs:  r.allTokens[n-1 : n : n],
			FinishReason: r.FinishReason,
			StopReason:   r.StopReason,
			Events:       r.takeEvents(),
			PrefillStats: r.takePrefillStats(),
		}
		if ro.Logprobs != nil && ro.Logprobs[i] != nil {
			o.NewLogprobs = []*sampling.Logprobs{ro.Logprobs[i]}
		}
		outs = append(outs, o)
		if r.FinishReason != stats.FinishNone {
			s.finish(r)
			anyFinished = true
		}
	}
	if anyFinished {
		s.running = slices.DeleteFunc(s.running, func(r *Request) bool { return r.Status == StatusFinished })
	}
	s.assertInvariants()
	return CoreOutputs{Outputs: outs, SchedulerStats: s.MakeStats(), Timestamp: s.now()}
}

func (s *Scheduler) scheduledRequest(so *SchedulerOutput, i int) *Request {
	if so == &s.out && i < len(s.scheduled) {
		return s.scheduled[i]
	}
	return s.requests[so.Requests[i].ID]
}

// checkStop sets FinishReason after a token was appended, in this order:
// EOS (unless IgnoreEOS) and stop token ids, both only once MinTokens are
// out; then MaxTokens; then MaxModelLen.
func (s *Scheduler) checkStop(r *Request) {
	last := r.allTokens[len(r.allTokens)-1]
	numOut := r.NumOutputTokens()
	p := &r.Params
	switch {
	case numOut >= p.MinTokens && !p.IgnoreEOS && r.EOSTokenID >= 0 && last == r.EOSTokenID:
		r.FinishReason = stats.FinishStop
	case numOut >= p.MinTokens && slices.Contains(p.StopTokenIDs, last):
		r.FinishReason = stats.FinishStop
		r.StopReason = last
	case numOut >= p.MaxTokens:
		r.FinishReason = stats.FinishLength
	case r.NumTokens() >= s.cfg.MaxModelLen:
		r.FinishReason = stats.FinishLength
	}
}

// MakeStats snapshots the queues and KV usage after the step and drains the
// prefix-cache stats (per-step deltas).
func (s *Scheduler) MakeStats() *stats.SchedulerStats {
	return &stats.SchedulerStats{
		NumRunningReqs:   len(s.running),
		NumWaitingReqs:   s.waiting.Len(),
		KVCacheUsage:     s.kv.Usage(),
		PrefixCacheStats: s.kv.TakePrefixCacheStats(),
	}
}
