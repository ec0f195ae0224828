package sched

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"govllm/internal/kvcache"
	"govllm/internal/pooling"
	"govllm/internal/stats"
)

// Errors returned by AddRequest; the front end maps them to 400.
var (
	ErrDuplicateRequest = errors.New("sched: duplicate request id")
	ErrEmptyPrompt      = errors.New("sched: empty prompt")
	ErrPromptTooLong    = errors.New("sched: prompt too long")
	ErrInvalidRequest   = errors.New("sched: invalid request")
)

// Scheduler is vLLM V1's Scheduler: it decides every step which requests
// run and how many tokens each computes, owns the KV-cache manager's
// per-request state, and turns the executor's sampled tokens into
// CoreOutputs. It is synchronous and not safe for concurrent use.
type Scheduler struct {
	cfg Config
	kv  *kvcache.Manager
	now func() time.Time

	requests map[RequestID]*Request // every unfinished request
	waiting  waitQueue
	running  []*Request
	nextSeq  uint64

	// The current step.
	out       SchedulerOutput
	scheduled []*Request // aligned with out.Requests
	step      stepState

	// abortOutputs ride on the next UpdateFromOutput.
	abortOutputs []CoreOutput
}

type stepState struct {
	ts        time.Time // the one timestamp of this schedule pass
	budget    int
	preempted bool
}

// New builds a Scheduler over kv. The longest request (MaxModelLen tokens)
// must fit in the KV cache, so that a request alone can always run.
func New(cfg Config, kv *kvcache.Manager) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if kv == nil {
		return nil, fmt.Errorf("%w: nil KV-cache manager", ErrInvalidConfig)
	}
	if need := kv.BlocksFor(cfg.MaxModelLen); need > kv.NumBlocks() {
		return nil, fmt.Errorf("%w: max model len %d needs %d KV blocks of %d tokens, the cache has %d",
			ErrInvalidConfig, cfg.MaxModelLen, need, kv.BlockSize(), kv.NumBlocks())
	}
	return &Scheduler{
		cfg:      cfg,
		kv:       kv,
		now:      time.Now,
		requests: make(map[RequestID]*Request),
		waiting:  newWaitQueue(cfg.Policy),
	}, nil
}

// SetClock replaces time.Now (tests).
func (s *Scheduler) SetClock(now func() time.Time) { s.now = now }

// Config returns the scheduler's configuration.
func (s *Scheduler) Config() Config { return s.cfg }

// KV returns the KV-cache manager.
func (s *Scheduler) KV() *kvcache.Manager { return s.kv }

// NumRunning is the running queue length.
func (s *Scheduler) NumRunning() int { return len(s.running) }

// NumWaiting is the waiting queue length (new and preempted requests).
func (s *Scheduler) NumWaiting() int { return s.waiting.Len() }

// HasRequests reports unfinished requests.
func (s *Scheduler) HasRequests() bool { return len(s.requests) > 0 }

// HasPendingOutputs reports abort outputs not yet delivered.
func (s *Scheduler) HasPendingOutputs() bool { return len(s.abortOutputs) > 0 }

// ResetPrefixCache drops every cached block when no block is in use (vLLM
// reset_prefix_cache without resetting running requests); it reports
// whether it did.
func (s *Scheduler) ResetPrefixCache() bool { return s.kv.ResetPrefixCache() }

// Request returns an unfinished request's state (read-only).
func (s *Scheduler) Request(id RequestID) (*Request, bool) {
	r, ok := s.requests[id]
	return r, ok
}

// AddRequest validates er, puts it in the waiting queue and records QUEUED.
func (s *Scheduler) AddRequest(er EngineRequest) error {
	switch n := len(er.PromptTokenIDs); {
	case n == 0:
		return fmt.Errorf("%w (request %q)", ErrEmptyPrompt, er.ID)
	case n >= s.cfg.MaxModelLen:
		return fmt.Errorf("%w: request %q has %d prompt tokens, max model len is %d", ErrPromptTooLong, er.ID, n, s.cfg.MaxModelLen)
	}
	if _, dup := s.requests[er.ID]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateRequest, er.ID)
	}
	if er.Params.MaxTokens < 1 {
		return fmt.Errorf("%w: request %q: max tokens must be at least 1, got %d", ErrInvalidRequest, er.ID, er.Params.MaxTokens)
	}
	now := s.now()
	n := len(er.PromptTokenIDs)
	toks := make([]int32, n, n+min(er.Params.MaxTokens, s.cfg.MaxModelLen-n)) // no n+MaxTokens: it can overflow
	copy(toks, er.PromptTokenIDs)
	r := &Request{
		ID:              er.ID,
		Params:          er.Params,
		EOSTokenID:      er.EOSTokenID,
		Priority:        er.Priority,
		ArrivalTime:     er.ArrivalTime,
		constraint:      er.Constraint,
		pool:            newPool(er.Pooling),
		Status:          StatusWaiting,
		StopReason:      -1,
		NumPromptTokens: n,
		allTokens:       toks,
		seq:             s.nextSeq,
		heapIndex:       -1,
	}
	if r.ArrivalTime.IsZero() {
		r.ArrivalTime = now
	}
	s.nextSeq++
	s.requests[r.ID] = r
	s.waiting.Push(r)
	r.recordEvent(stats.EventQueued, now)
	s.assertInvariants()
	return nil
}

// newPool is the accumulator of an embedding request (nil otherwise).
func newPool(p *pooling.Params) *pooling.Acc {
	if p == nil {
		return nil
	}
	return pooling.NewAcc(*p)
}

// Schedule plans one step: running requests first (decodes and continuing
// prefill chunks, preempting when KV blocks run out), then waiting ones
// (unless something was preempted this step). The result is owned by the
// Scheduler and valid until the next Schedule; every Schedule must be
// followed by exactly one UpdateFromOutput for it (with a nil RunnerOutput
// when nothing was scheduled).
func (s *Scheduler) Schedule() *SchedulerOutput {
	s.step = stepState{ts: s.now(), budget: s.cfg.MaxNumBatchedTokens}
	s.out.Requests = s.out.Requests[:0]
	clear(s.scheduled)
	s.scheduled = s.scheduled[:0]

	s.scheduleRunning()
	if !s.step.preempted {
		s.scheduleWaiting()
	}

	s.out.TotalNumScheduledTokens = s.cfg.MaxNumBatchedTokens - s.step.budget
	s.assertInvariants()
	return &s.out
}

// numNewTokens is how many of r's uncomputed tokens fit this step.
func (s *Scheduler) numNewTokens(r *Request, numComputed int) int {
	n := r.NumTokens() - numComputed
	if t := s.cfg.LongPrefillTokenThreshold; t > 0 {
		n = min(n, t)
	}
	return min(n, s.step.budget)
}

func (s *Scheduler) scheduleRunning() {
	for i := 0; i < len(s.running) && s.step.budget > 0; {
		r := s.running[i]
		n := s.numNewTokens(r, r.NumComputedTokens)
		if n <= 0 {
			i++
			continue
		}
		n += len(s.draft(r))
		table, ok := s.allocateOrPreempt(r, n, &i)
		if !ok {
			// r itself was the victim and left running[i]. vLLM stops
			// serving running requests here; under Priority the ones after
			// r outrank it, so they still get their turn (under FCFS r was
			// the last one anyway).
			continue
		}
		s.addScheduled(r, n, table)
		i++
	}
}

// allocateOrPreempt grows running request r (at running[*i]) by n tokens,
// preempting victims until the allocation succeeds. It returns false when r
// itself had to be preempted. *i follows r's index as victims leave.
func (s *Scheduler) allocateOrPreempt(r *Request, n int, i *int) ([]kvcache.BlockID, bool) {
	if len(r.blockTable)*s.kv.BlockSize() >= r.NumComputedTokens+n {
		return r.blockTable, true // fast path: the blocks already cover the step
	}
	for {
		if table, ok := s.kv.AllocateSlots(string(r.ID), r.NumComputedTokens, n, kvcache.Prefix{}); ok {
			r.blockTable = table
			return table, true
		}
		v := s.victim()
		vi := slices.Index(s.running, v)
		s.preempt(v)
		if v == r {
			return nil, false
		}
		if vi < *i {
			*i--
		}
	}
}

// victim picks the request to preempt: FCFS the newest running request,
// Priority the lowest priority (highest value), latest arrival.
func (s *Scheduler) victim() *Request {
	if s.cfg.Policy == FCFS {
		return s.running[len(s.running)-1]
	}
	v := s.running[0]
	for _, r := range s.running[1:] {
		if v.before(r) {
			v = r
		}
	}
	return v
}

// preempt frees v's blocks and sends it back to the front of the waiting
// queue; it is recomputed later (with prefix-cache hits).
func (s *Scheduler) preempt(v *Request) {
	s.running = slices.DeleteFunc(s.running, func(r *Request) bool { return r == v })
	if j := slices.Index(s.scheduled, v); j >= 0 {
		s.step.budget += len(s.out.Requests[j].TokenIDs)
		s.out.Requests = slices.Delete(s.out.Requests, j, j+1)
		s.scheduled = slices.Delete(s.scheduled, j, j+1)
	}
	s.kv.Free(string(v.ID))
	s.forgetDrafts(v)
	v.blockTable = nil
	v.Status = StatusPreempted
	v.NumComputedTokens = 0
	v.NumPreemptions++
	v.recordEvent(stats.EventPreempted, s.step.ts)
	s.waiting.PushFront(v)
	s.step.preempted = true
}

func (s *Scheduler) scheduleWaiting() {
	for s.waiting.Len() > 0 && s.step.budget > 0 && len(s.running) < s.cfg.MaxNumSeqs {
		r := s.waiting.Peek()
		id := string(r.ID)
		var prefix kvcache.Prefix
		if r.readsPrefixCache() {
			prefix = s.kv.ComputedBlocks(id, r.allTokens, r.NumPreemptions > 0)
		}
		n := r.NumTokens() - prefix.NumTokens
		if !s.cfg.EnableChunkedPrefill && n > s.step.budget {
			return
		}
		n = s.numNewTokens(r, prefix.NumTokens)
		table, ok := s.kv.AllocateSlots(id, prefix.NumTokens, n, prefix)
		if !ok {
			return // no preemption for waiting requests: wait for blocks
		}
		r.blockTable = table
		s.waiting.Pop()
		r.NumComputedTokens = prefix.NumTokens
		if !r.prefillSet {
			r.prefillSet = true
			ps := stats.NewPrefillStats(r.NumPromptTokens, prefix.NumTokens)
			r.prefillStats = &ps
		}
		r.Status = StatusRunning
		r.recordEvent(stats.EventScheduled, s.step.ts)
		s.running = append(s.running, r)
		s.addScheduled(r, n, table)
	}
}

func (s *Scheduler) addScheduled(r *Request, n int, table []kvcache.BlockID) {
	start := r.NumComputedTokens
	p := r.NumPromptTokens
	known := min(start+n, len(r.allTokens)) // the drafts are not known tokens
	plStart, plEnd := r.promptLogprobsRange(start, n)
	fed := r.allTokens[start:known:known]
	var spec []int32
	if known < start+n {
		r.specFeed = append(append(r.specFeed[:0], fed...), r.spec...)
		fed, spec = r.specFeed, r.spec
	}
	s.out.Requests = append(s.out.Requests, ScheduledRequest{
		PromptLogprobsStart: plStart,
		PromptLogprobsEnd:   plEnd,
		ID:                  r.ID,
		TokenIDs:            fed,
		SpecTokenIDs:        spec,
		Start:               start,
		BlockTable:          table,
		Sample:              known == len(r.allTokens),
		Params:              &r.Params,
		Constraint:          r.constraint,
		PromptTokenIDs:      r.allTokens[:p:p],
		OutputTokenIDs:      r.allTokens[p:len(r.allTokens):len(r.allTokens)],
		Pool:                r.pool,
	})
	s.scheduled = append(s.scheduled, r)
	s.step.budget -= n
	// Register the full blocks this step writes now, as vLLM does at
	// allocation, so that requests admitted after r in this step hit them.
	// Blocks before start are registered already (an abandoned step's
	// blocks are scheduled again from the same start). Drafted tokens are
	// never registered: most are rejected.
	if bs := s.kv.BlockSize(); known/bs > start/bs {
		s.kv.CacheScheduledBlocks(string(r.ID), r.allTokens, known)
	}
}

// Abort finishes the named requests with FinishAbort at once, wherever they
// are, and frees their blocks. Each yields one CoreOutput (with its pending
// events) in the next UpdateFromOutput. Unknown or finished ids are ignored.
func (s *Scheduler) Abort(ids ...RequestID) {
	for _, id := range ids {
		r := s.requests[id]
		if r == nil {
			continue
		}
		switch r.Status {
		case StatusWaiting, StatusPreempted:
			s.waiting.Remove(r)
		case StatusRunning:
			s.running = slices.DeleteFunc(s.running, func(x *Request) bool { return x == r })
		}
		r.FinishReason = stats.FinishAbort
		s.finish(r)
		s.abortOutputs = append(s.abortOutputs, CoreOutput{
			ReqID:        id,
			FinishReason: stats.FinishAbort,
			StopReason:   -1,
			Events:       r.takeEvents(),
			PrefillStats: r.takePrefillStats(),
		})
	}
	s.assertInvariants()
}

// finish frees r's blocks and forgets it; the caller removes it from its queue.
func (s *Scheduler) finish(r *Request) {
	r.Status = StatusFinished
	s.kv.Free(string(r.ID))
	s.forgetDrafts(r)
	r.blockTable = nil
	delete(s.requests, r.ID)
}
