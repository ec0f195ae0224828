package output

import (
	"errors"
	"fmt"
	"time"

	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// Decoder is an incremental detokenizer for one sequence: Add returns the
// text that became final with id (never a broken UTF-8 sequence); Flush
// returns what is still held back, once the sequence finished.
// *tokenizer.Decoder satisfies it.
type Decoder interface {
	Add(id int32) string
	Flush() string
}

// NewDecoderFunc builds the Decoder of one sequence with the given prompt
// and the request's parameters (their detokenization options).
type NewDecoderFunc func(promptTokenIDs []int32, p *sampling.Params) Decoder

// ErrDuplicateID is returned by AddRequest for an id already in flight.
var ErrDuplicateID = errors.New("output: request id already in flight")

// Request is what the Processor must know about one user request.
type Request struct {
	ID             string
	PromptTokenIDs []int32
	Params         sampling.Params // N sequences; MaxTokens already filled
	Kind           Kind
	ArrivalTime    time.Time // stamped before tokenization
	// Structured is set for a request with a structured-output constraint;
	// CompileTime is the time the front end took to compile it (observed
	// in the statistics on the request's first output).
	Structured  bool
	CompileTime time.Duration
	// Pooling marks an embedding request: it has no max_tokens of its own
	// (vLLM's max_tokens_param is None), so none is observed.
	Pooling bool
}

// group is one user request: a parallel-sampling parent with n sequences
// (n == 1 for a plain request).
type group struct {
	req         Request
	seqs        []*seqState
	numFinished int
	maxGenToks  int // over finished sequences, for max_num_generation_tokens
	cached      int // NumCachedTokens of the latest first output
	// promptLogprobs are the first sequence's prompt logprobs (every
	// sequence scores the same prompt); promptSent once a Delta output
	// carried them.
	promptLogprobs []sampling.Logprobs
	promptSent     bool

	touched uint64 // Process call that last gave news (for batching outputs)
}

// seqState is one sequence's state (vLLM RequestState).
type seqState struct {
	g     *group
	id    sched.RequestID
	index int
	dec   Decoder
	stats stats.RequestStateStats

	isPrefilling bool
	numCached    int
	clientAbort  bool // the client cancelled it; the core's abort is pending

	tokenIDs []int32
	logprobs []sampling.Logprobs
	text     []byte
	finish   stats.FinishReason
	stop     any
	pooled   []float32 // an embedding request's vector
	timings  *Timings

	// Delta bookkeeping: what has been handed out.
	sentText, sentTokens, sentLogprobs int
	news                               bool // has news in the current Process call
}

// Processor turns core outputs into RequestOutputs and fills the
// iteration's statistics (vLLM OutputProcessor). It belongs to one
// goroutine.
type Processor struct {
	newDecoder NewDecoderFunc
	seqs       map[sched.RequestID]*seqState
	groups     map[string]*group
	call       uint64
	touched    []*group
}

// NewProcessor returns an empty Processor that detokenizes with newDecoder.
func NewProcessor(newDecoder NewDecoderFunc) *Processor {
	return &Processor{
		newDecoder: newDecoder,
		seqs:       map[sched.RequestID]*seqState{},
		groups:     map[string]*group{},
	}
}

// AddRequest registers a user request before its sequences reach the core
// and returns their engine ids (ChildID). r.Params.N ≥ 1.
func (p *Processor) AddRequest(r Request) ([]sched.RequestID, error) {
	n := max(r.Params.N, 1)
	if _, dup := p.groups[r.ID]; dup {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateID, r.ID)
	}
	ids := make([]sched.RequestID, n)
	for i := range ids {
		ids[i] = ChildID(r.ID, i, n)
		if _, dup := p.seqs[ids[i]]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateID, ids[i])
		}
	}
	g := &group{req: r, seqs: make([]*seqState, n)}
	for i, id := range ids {
		s := &seqState{g: g, id: id, index: i, isPrefilling: true, dec: p.newDecoder(r.PromptTokenIDs, &r.Params)}
		s.stats.ArrivalTime = r.ArrivalTime
		g.seqs[i] = s
		p.seqs[id] = s
	}
	p.groups[r.ID] = g
	return ids, nil
}

// HasUnfinished reports whether any request is in flight.
func (p *Processor) HasUnfinished() bool { return len(p.groups) > 0 }

// NumUnfinished is the number of user requests in flight.
func (p *Processor) NumUnfinished() int { return len(p.groups) }

// Abort marks a user request as cancelled by its client and returns the
// engine ids of its unfinished sequences, which the caller aborts in the
// core. The state stays until the core's abort output arrives, so the
// request is counted as finished with reason abort (docs/metrics.md, decision 6).
func (p *Processor) Abort(id string) []sched.RequestID {
	g, ok := p.groups[id]
	if !ok {
		return nil
	}
	var ids []sched.RequestID
	for _, s := range g.seqs {
		if s.finish == stats.FinishNone {
			s.clientAbort = true
			ids = append(ids, s.id)
		}
	}
	return ids
}

// Drop forgets a user request without statistics or output (its sequences
// never reached the core).
func (p *Processor) Drop(id string) {
	g, ok := p.groups[id]
	if !ok {
		return
	}
	for _, s := range g.seqs {
		delete(p.seqs, s.id)
	}
	delete(p.groups, id)
}

// AbortAll drops every request without statistics (the engine is shutting
// down or died) and returns a final abort output for each.
func (p *Processor) AbortAll() []*RequestOutput {
	var outs []*RequestOutput
	for id, g := range p.groups {
		o := &RequestOutput{RequestID: id, PromptTokenIDs: g.req.PromptTokenIDs, Finished: true, NumCachedTokens: g.cached}
		for _, s := range g.seqs {
			if s.finish != stats.FinishNone && g.req.Kind == Delta {
				continue
			}
			if s.finish == stats.FinishNone {
				s.finish = stats.FinishAbort
				s.news = true
			}
			o.Outputs = append(o.Outputs, s.completion(g.req.Kind, true))
		}
		outs = append(outs, o)
	}
	clear(p.groups)
	clear(p.seqs)
	return outs
}

// Process handles one step's core outputs (vLLM process_outputs). it
// receives the statistics when non-nil. It returns at most one
// RequestOutput per user request with news, and the engine ids of
// sequences that a stop string finished while the core still runs them
// (the caller aborts those in the core).
func (p *Processor) Process(co *sched.CoreOutputs, it *stats.IterationStats) (outs []*RequestOutput, stopAborts []sched.RequestID) {
	p.call++
	p.touched = p.touched[:0]
	if it != nil {
		it.StructuredMaskTimesIter = append(it.StructuredMaskTimesIter, co.MaskTimes...)
	}
	for i := range co.Outputs {
		o := &co.Outputs[i]
		s, ok := p.seqs[o.ReqID]
		if !ok {
			continue // finished or stopped already
		}
		g := s.g
		if it != nil {
			it.UpdateFromOutput(stats.OutputUpdate{
				NumNewTokens:    len(o.NewTokenIDs),
				Events:          o.Events,
				PrefillStats:    o.PrefillStats,
				EngineTimestamp: co.Timestamp,
				IsPrefilling:    s.isPrefilling,
				Pooled:          o.Pooled != nil,
				RequestID:       g.req.ID, // the parent's for every child (docs/metrics.md, exemplars)
			}, &s.stats)
		}
		if s.isPrefilling {
			if it != nil && g.req.Structured && s.index == 0 {
				it.StructuredCompileTimesIter = append(it.StructuredCompileTimesIter, g.req.CompileTime)
			}
			if o.PrefillStats != nil {
				s.numCached = o.PrefillStats.NumCachedTokens
				g.cached = s.numCached
			}
			s.isPrefilling = false
		}
		if o.PromptLogprobs != nil && g.promptLogprobs == nil {
			g.promptLogprobs = make([]sampling.Logprobs, len(o.PromptLogprobs))
			for j, lp := range o.PromptLogprobs {
				g.promptLogprobs[j] = *lp
			}
		}
		if p.update(s, o) {
			stopAborts = append(stopAborts, s.id)
		}
		if g.touched != p.call {
			g.touched = p.call
			p.touched = append(p.touched, g)
		}
		if s.finish != stats.FinishNone {
			p.finishSeq(s, it)
		}
	}
	for _, g := range p.touched {
		if o := g.output(); o != nil {
			outs = append(outs, o)
		}
	}
	return outs, stopAborts
}

// update applies one core output to a sequence: tokens, logprobs,
// detokenization and stop strings. It reports whether a stop string
// finished a sequence the core has not finished.
func (p *Processor) update(s *seqState, o *sched.CoreOutput) (abortInCore bool) {
	params := &s.g.req.Params
	s.news = true
	if o.Pooled != nil {
		s.pooled = o.Pooled
	}
	s.tokenIDs = append(s.tokenIDs, o.NewTokenIDs...)
	if params.Logprobs != nil {
		for _, lp := range o.NewLogprobs {
			if lp != nil {
				s.logprobs = append(s.logprobs, *lp)
			}
		}
	}
	s.finish = o.FinishReason
	if o.StopReason >= 0 && o.FinishReason == stats.FinishStop {
		s.stop = o.StopReason
	}
	ids := o.NewTokenIDs
	if o.FinishReason == stats.FinishStop && !params.IncludeStopStrInOutput && len(ids) > 0 {
		ids = ids[:len(ids)-1] // the stop token's text is not part of the output
	}
	before := len(s.text)
	for _, id := range ids {
		s.text = append(s.text, s.dec.Add(id)...)
	}
	if o.FinishReason != stats.FinishNone {
		s.text = append(s.text, s.dec.Flush()...)
	}
	if len(params.Stop) == 0 || len(s.tokenIDs) <= params.MinTokens {
		return false
	}
	str, cut, ok := checkStop(s.text, len(s.text)-before, params.Stop, params.IncludeStopStrInOutput)
	if !ok {
		return false
	}
	if cut >= 0 {
		s.text = s.text[:cut]
	}
	s.finish, s.stop = stats.FinishStop, str
	return o.FinishReason == stats.FinishNone
}

// finishSeq removes a finished sequence and records its statistics.
func (p *Processor) finishSeq(s *seqState, it *stats.IterationStats) {
	g := s.g
	delete(p.seqs, s.id)
	g.numFinished++
	g.maxGenToks = max(g.maxGenToks, s.stats.NumGenerationTokens)
	if it != nil {
		f := *it.UpdateFromFinished(stats.FinishInfo{
			Reason:          s.finish,
			NumPromptTokens: len(g.req.PromptTokenIDs),
			MaxTokensParam:  maxTokensParam(&g.req),
			NumCachedTokens: s.numCached,
			ClientAbort:     s.clientAbort && s.finish == stats.FinishAbort,
			RequestID:       g.req.ID,
		}, &s.stats)
		s.timings = &Timings{FinishedRequestStats: f, TimeToFirstToken: s.stats.FirstTokenLatency}
	}
	if g.numFinished == len(g.seqs) {
		if it != nil {
			it.ObserveParent(len(g.seqs), g.maxGenToks)
		}
		delete(p.groups, g.req.ID)
	}
}

// maxTokensParam is the request's max_tokens for the statistics (0: none).
func maxTokensParam(r *Request) int {
	if r.Pooling {
		return 0
	}
	return r.Params.MaxTokens
}

// output builds the group's RequestOutput for this Process call, or nil
// when its Kind has nothing to say yet.
func (g *group) output() *RequestOutput {
	finished := g.numFinished == len(g.seqs)
	kind := g.req.Kind
	if kind == FinalOnly && !finished {
		for _, s := range g.seqs {
			s.news = false
		}
		return nil
	}
	o := &RequestOutput{RequestID: g.req.ID, PromptTokenIDs: g.req.PromptTokenIDs, Finished: finished, NumCachedTokens: g.cached}
	if g.promptLogprobs != nil && (kind != Delta || !g.promptSent) {
		o.PromptLogprobs = g.promptLogprobs[:len(g.promptLogprobs):len(g.promptLogprobs)]
		g.promptSent = true
	}
	for _, s := range g.seqs {
		if kind == Delta && !s.news {
			continue
		}
		o.Outputs = append(o.Outputs, s.completion(kind, s.finish != stats.FinishNone))
		s.news = false
	}
	return o
}

// completion renders one sequence per kind. Text that could still become
// a stop string is held back until the sequence finishes.
func (s *seqState) completion(kind Kind, finished bool) CompletionOutput {
	end := len(s.text)
	if !finished && !s.g.req.Params.IncludeStopStrInOutput {
		end -= holdBack(s.text, s.g.req.Params.Stop)
	}
	c := CompletionOutput{Index: s.index, FinishReason: s.finish, StopReason: s.stop, Pooled: s.pooled, Timings: s.timings}
	if kind != Delta {
		c.Text = string(s.text[:end])
		c.TokenIDs = s.tokenIDs[:len(s.tokenIDs):len(s.tokenIDs)]
		c.Logprobs = s.logprobs[:len(s.logprobs):len(s.logprobs)]
		return c
	}
	if end > s.sentText {
		c.Text = string(s.text[s.sentText:end])
		s.sentText = end
	}
	// Fresh slices: a Stream appends to them when merging deltas.
	c.TokenIDs = append([]int32(nil), s.tokenIDs[s.sentTokens:]...)
	s.sentTokens = len(s.tokenIDs)
	if len(s.logprobs) > s.sentLogprobs {
		c.Logprobs = append([]sampling.Logprobs(nil), s.logprobs[s.sentLogprobs:]...)
		s.sentLogprobs = len(s.logprobs)
	}
	return c
}
