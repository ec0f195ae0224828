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
	if ro.Pooled != nil && len(ro.Pooled) != len(so.Requests) {
		return fmt.Errorf("%w: %d pooled vectors for %d requests", ErrBadRunnerOutput, len(ro.Pooled), len(so.Requests))
	}
	for i := range so.Requests {
		sr := &so.Requests[i]
		switch tok := ro.SampledTokenIDs[i]; {
		case sr.Pool != nil && sr.Sample && (ro.Pooled == nil || ro.Pooled[i] == nil):
			return fmt.Errorf("%w: embedding request %q finished its prompt without a pooled vector", ErrBadRunnerOutput, sr.ID)
		case sr.Pool == nil && sr.Sample && tok < 0:
			return fmt.Errorf("%w: request %q sampled token %d", ErrBadRunnerOutput, sr.ID, tok)
		}
		if err := checkSpec(sr, ro, i); err != nil {
			return err
		}
		if n := sr.PromptLogprobsEnd - sr.PromptLogprobsStart; n > 0 &&
			(len(ro.PromptLogprobs) != len(so.Requests) || len(ro.PromptLogprobs[i]) != n) {
			return fmt.Errorf("%w: request %q: prompt logprobs for positions [%d, %d) missing", ErrBadRunnerOutput, sr.ID, sr.PromptLogprobsStart, sr.PromptLogprobsEnd)
		}
	}
	return nil
}

// checkSpec verifies request i's accepted drafts: at most its drafts, each
// sampled token but the last equal to the draft it accepts, logprobs
// aligned.
func checkSpec(sr *ScheduledRequest, ro *RunnerOutput, i int) error {
	if len(sr.SpecTokenIDs) == 0 {
		if ro.SpecTokenIDs != nil && len(ro.SpecTokenIDs[i]) > 0 {
			return fmt.Errorf("%w: request %q has accepted tokens but no drafts", ErrBadRunnerOutput, sr.ID)
		}
		return nil
	}
	if len(ro.SpecTokenIDs) != len(ro.SampledTokenIDs) {
		return fmt.Errorf("%w: request %q had drafts, the output has no accepted tokens", ErrBadRunnerOutput, sr.ID)
	}
	more := ro.SpecTokenIDs[i]
	if len(more) > len(sr.SpecTokenIDs) {
		return fmt.Errorf("%w: request %q accepted %d of %d drafts", ErrBadRunnerOutput, sr.ID, len(more), len(sr.SpecTokenIDs))
	}
	prev := ro.SampledTokenIDs[i]
	for j, t := range more {
		if prev != sr.SpecTokenIDs[j] {
			return fmt.Errorf("%w: request %q sampled %d at draft position %d (draft %d) and went on", ErrBadRunnerOutput, sr.ID, prev, j, sr.SpecTokenIDs[j])
		}
		prev = t
	}
	if ro.Logprobs != nil && ro.Logprobs[i] != nil && (len(ro.SpecLogprobs) != len(ro.SampledTokenIDs) || len(ro.SpecLogprobs[i]) != len(more)) {
		return fmt.Errorf("%w: request %q: logprobs of its accepted tokens missing", ErrBadRunnerOutput, sr.ID)
	}
	return nil
}

// AbandonStep undoes the hand-off of so, the current step's plan, when the
// executor did not run it (its context was cancelled): the finished ids go
// back for the next step, the blocks the plan registered in the prefix
// cache leave it (kvcache DropScheduled), and a request admitted with a
// prefix hit on such a block goes back to the front of the waiting queue,
// since nothing computed its prefix (its lookup counts again when it is
// admitted again). Computed tokens only advance in UpdateFromOutput, so the
// next Schedule plans the same tokens again for the other requests (in the
// blocks already allocated for them).
func (s *Scheduler) AbandonStep(so *SchedulerOutput) {
	if so != &s.out {
		return
	}
	for i := len(s.scheduled) - 1; i >= 0; i-- {
		r := s.scheduled[i]
		if r.Status == StatusRunning && s.kv.PendingBefore(string(r.ID), r.NumComputedTokens) {
			s.unadmit(r)
		}
	}
	s.kv.DropScheduled()
	so.Requests = so.Requests[:0]
	clear(s.scheduled)
	s.scheduled = s.scheduled[:0]
	s.assertInvariants()
}

// unadmit returns r, admitted in an abandoned step, to the front of the
// waiting queue as it was before: no blocks, no computed tokens, and its
// SCHEDULED event and undelivered PrefillStats taken back.
func (s *Scheduler) unadmit(r *Request) {
	s.running = slices.DeleteFunc(s.running, func(x *Request) bool { return x == r })
	s.kv.Free(string(r.ID))
	r.blockTable = nil
	r.NumComputedTokens = 0
	r.Status = StatusWaiting
	if r.NumPreemptions > 0 {
		r.Status = StatusPreempted
	}
	if n := len(r.events); n > 0 && r.events[n-1].Type == stats.EventScheduled {
		r.events = r.events[:n-1]
	}
	if r.prefillStats != nil { // set at this admission: the first output never came
		r.prefillStats, r.prefillSet = nil, false
	}
	s.waiting.PushFront(r)
}

// UpdateFromOutput applies one executed step (ro may be nil when nothing was
// scheduled): it commits the blocks the step registered in the prefix cache
// (their KV is written now), advances computed tokens, appends sampled tokens, checks stop conditions, frees finished requests and builds
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
	s.kv.CommitScheduled() // the step ran: the blocks it registered hold their KV

	anyFinished, stopCheck := false, false
	var spec *stats.SpecDecodingStats
	for i := range so.Requests {
		sr := &so.Requests[i]
		r := s.scheduledRequest(so, i)
		if r == nil || r.Status != StatusRunning {
			continue // aborted after Schedule
		}
		toks := ro.SampledTokenIDs[i : i+1 : i+1]
		if len(sr.SpecTokenIDs) > 0 {
			toks = append(toks, ro.SpecTokenIDs[i]...)
			nd, na := len(sr.SpecTokenIDs), len(toks)-1
			r.NumComputedTokens -= nd - na // the rejected drafts' KV is not the sequence's
			s.specStats(&spec).Observe(nd, na)
			s.adaptSpec(r, nd, na)
		}
		r.NumComputedTokens += len(sr.TokenIDs)
		if sr.PromptLogprobsEnd > sr.PromptLogprobsStart {
			r.promptLogprobs = append(r.promptLogprobs, ro.PromptLogprobs[i]...)
		}
		if !sr.Sample {
			continue // partial prefill: no output
		}
		if r.pool != nil {
			outs = append(outs, s.finishPooling(r, ro.Pooled[i]))
			anyFinished = true
			continue
		}
		o := s.appendTokens(r, toks, stepLogprobs(ro, i))
		outs = append(outs, o)
		if r.FinishReason != stats.FinishNone {
			s.finish(r)
			anyFinished = true
			continue
		}
		if len(sr.SpecTokenIDs) > 0 {
			r.blockTable = s.kv.Trim(string(r.ID), len(r.allTokens))
		}
		if len(r.Params.Stop) > 0 && r.NumOutputTokens() > r.Params.MinTokens {
			stopCheck = true // the front end matches stop strings after min_tokens
		}
	}
	if anyFinished {
		s.running = slices.DeleteFunc(s.running, func(r *Request) bool { return r.Status == StatusFinished })
	}
	s.assertInvariants()
	co := CoreOutputs{Outputs: outs, SchedulerStats: s.MakeStats(), Timestamp: s.now(), StopCheck: stopCheck}
	co.SchedulerStats.SpecDecoding = spec
	if ro != nil {
		co.MaskTimes = ro.MaskTimes
	}
	return co
}

// stepLogprobs returns the logprobs of request i's tokens of the step
// (the sampled one, then the accepted drafts' successors), or nil.
func stepLogprobs(ro *RunnerOutput, i int) []*sampling.Logprobs {
	if ro.Logprobs == nil || ro.Logprobs[i] == nil {
		return nil
	}
	lps := []*sampling.Logprobs{ro.Logprobs[i]}
	if ro.SpecLogprobs != nil {
		lps = append(lps, ro.SpecLogprobs[i]...)
	}
	return lps
}

// appendTokens appends a step's tokens to running request r one at a
// time, checking the stop conditions and advancing its constraint after
// each; the tokens after one that finishes it are dropped. It returns the
// request's output of the step.
func (s *Scheduler) appendTokens(r *Request, toks []int32, lps []*sampling.Logprobs) CoreOutput {
	first := len(r.allTokens)
	for _, t := range toks {
		r.allTokens = append(r.allTokens, t)
		s.checkStop(r)
		s.advanceConstraint(r)
		if r.FinishReason != stats.FinishNone {
			break
		}
	}
	n := len(r.allTokens)
	o := CoreOutput{
		ReqID:        r.ID,
		NewTokenIDs:  r.allTokens[first:n:n],
		FinishReason: r.FinishReason,
		StopReason:   r.StopReason,
		Events:       r.takeEvents(),
		PrefillStats: r.takePrefillStats(),
	}
	if r.Params.PromptLogprobs != nil {
		o.PromptLogprobs = r.takePromptLogprobs()
	}
	if lps != nil {
		o.NewLogprobs = lps[:n-first]
	}
	return o
}

// finishPooling finishes an embedding request whose prompt is computed:
// its one output carries the pooled vector and no token (vLLM finishes a
// pooling request with FINISHED_STOPPED once its pooler output is there).
func (s *Scheduler) finishPooling(r *Request, pooled []float32) CoreOutput {
	r.FinishReason = stats.FinishStop
	o := CoreOutput{
		ReqID:        r.ID,
		FinishReason: stats.FinishStop,
		StopReason:   -1,
		Events:       r.takeEvents(),
		PrefillStats: r.takePrefillStats(),
		Pooled:       pooled,
	}
	s.finish(r)
	return o
}

// advanceConstraint moves r's structured-output state past its new token.
// The runner sampled under the state's mask, so a refusal means the mask
// allowed nothing (the constraint cannot go on within the request's
// limits) or a bug: the request finishes with reason error rather than
// go on unconstrained.
func (s *Scheduler) advanceConstraint(r *Request) {
	if r.constraint == nil {
		return
	}
	if err := r.constraint.Advance(r.allTokens[len(r.allTokens)-1]); err != nil && r.FinishReason == stats.FinishNone {
		r.FinishReason = stats.FinishError
	}
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
