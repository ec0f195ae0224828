package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"govllm/internal/model"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/tensor"
)

// ErrInvalidConfig is wrapped by every Config.Validate error.
var ErrInvalidConfig = errors.New("runner: invalid config")

// ErrInvalidStep marks a SchedulerOutput the runner cannot execute (a
// request to sample without params, an empty request); errors from the
// forward pass's own checks wrap model.ErrBatch instead.
var ErrInvalidStep = errors.New("runner: invalid scheduler output")

// Config sizes the runner's storage.
type Config struct {
	// NumBlocks and BlockSize size the physical KV cache; they must match
	// the kvcache.Manager's.
	NumBlocks, BlockSize int
	// KVCacheDType is the KV cache's format (--kv-cache-dtype; nil:
	// float32); the model must accept it (model.Config.CheckKVCacheDType).
	KVCacheDType *tensor.KVCodec
	// MaxNumBatchedTokens and MaxNumSeqs size the workspace and the logits
	// buffer up front (larger steps still work: buffers grow).
	MaxNumBatchedTokens, MaxNumSeqs int
	// EOSTokenID is the model's end-of-sequence id, masked while a request
	// has fewer than min_tokens outputs; -1 when the model has none.
	EOSTokenID int32
	// Seed starts the generator unseeded requests draw from.
	Seed uint64
}

// DefaultConfig returns vLLM-like defaults: 1024 blocks of 16 tokens, a
// 2048-token step budget, 128 sequences, no EOS, seed 0.
func DefaultConfig() Config {
	return Config{NumBlocks: 1024, BlockSize: 16, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128, EOSTokenID: -1}
}

// Validate reports a configuration error wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case c.NumBlocks < 1:
		return bad("num blocks must be at least 1, got %d", c.NumBlocks)
	case c.BlockSize < 1:
		return bad("block size must be at least 1, got %d", c.BlockSize)
	case c.MaxNumBatchedTokens < 1:
		return bad("max num batched tokens must be at least 1, got %d", c.MaxNumBatchedTokens)
	case c.MaxNumSeqs < 1:
		return bad("max num seqs must be at least 1, got %d", c.MaxNumSeqs)
	case c.EOSTokenID < -1:
		return bad("eos token id must be -1 (none) or a token id, got %d", c.EOSTokenID)
	}
	return nil
}

// Stats are cumulative timings of Execute (for benchmarks and logging).
type Stats struct {
	Steps   int64
	Execute time.Duration // whole Execute calls
	Forward time.Duration // inside model.Forward
	Sample  time.Duration // sampling all rows
	// Phases splits Forward by phase once TimePhases was called (else zero).
	Phases model.Phases
}

// Runner executes scheduler steps on one model. It is driven by one
// goroutine at a time.
type Runner struct {
	m     *model.Model
	pool  *tensor.Pool
	cfg   Config
	kv    *model.KVCache
	ws    *model.Workspace
	vocab int

	batch    model.Batch
	blockIDs []int32   // backing store of every Seq.BlockTable of the step
	logits   []float32 // rows × vocab
	// promptLogits holds up to promptLogChunk rows of prompt-position logits.
	promptLogits []float32
	rows         []row     // the requests that sample, in logits-row order
	nLogits      int       // logits rows of the step (a request with drafts has several)
	specOut      [][]int32 // per pool thread: output tokens followed by accepted drafts
	hidden       []float32 // backing store of every Seq.Hidden of the step (embedding and prompt-logprobs requests)

	samplers []sampling.Sampler // one per pool thread
	masks    [][]uint64         // one structured-output mask buffer per pool thread
	rng      sampling.RNG       // the runner-wide generator of unseeded requests

	stats Stats
}

// row is one request to sample this step.
type row struct {
	req int // index into SchedulerOutput.Requests
	off int // its first logits row; it has 1 + its drafts' count
	rng sampling.RNG
	// masks are the times of the structured-output masks computed for
	// it this step (one per position sampled)
	masks []time.Duration
}

// New allocates the physical KV cache (cfg.NumBlocks × cfg.BlockSize token
// slots, m.Config.KVBytesPerToken(cfg.KVCacheDType) bytes each) and a workspace for m. pool
// may be nil (everything runs on the caller).
func New(m *model.Model, pool *tensor.Pool, cfg Config) (*Runner, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	vocab := m.Config.VocabSize
	if err := m.Config.CheckKVCacheDType(cfg.KVCacheDType); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if int(cfg.EOSTokenID) >= vocab {
		return nil, fmt.Errorf("%w: eos token id %d outside the vocabulary of %d", ErrInvalidConfig, cfg.EOSTokenID, vocab)
	}
	return &Runner{
		m:        m,
		pool:     pool,
		cfg:      cfg,
		kv:       model.NewKVCacheOf(cfg.KVCacheDType, m.Config, cfg.NumBlocks, cfg.BlockSize),
		ws:       m.NewWorkspace(cfg.MaxNumBatchedTokens),
		vocab:    vocab,
		logits:   make([]float32, cfg.MaxNumSeqs*vocab),
		samplers: make([]sampling.Sampler, pool.Threads()),
		masks:    make([][]uint64, pool.Threads()),
		rng:      sampling.NewRNG(cfg.Seed),
	}, nil
}

// Stats returns the cumulative timings.
func (r *Runner) Stats() Stats {
	st := r.stats
	if r.ws.Phases != nil {
		st.Phases = *r.ws.Phases
	}
	return st
}

// TimePhases turns on the per-phase timing of the forward pass
// (Stats.Phases): one clock read per phase, nine per layer.
func (r *Runner) TimePhases() {
	if r.ws.Phases == nil {
		r.ws.Phases = &model.Phases{}
	}
}

// Execute runs one step: it feeds every scheduled request's tokens through
// the model in one flattened batch (writing their K/V into the blocks of
// their block tables) and samples a token for each request whose Sample is
// set. The returned RunnerOutput is aligned with so.Requests and owned by
// the caller.
func (r *Runner) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	out := &sched.RunnerOutput{SampledTokenIDs: make([]int32, len(so.Requests))}
	if err := r.prepare(so); err != nil {
		return nil, err
	}
	if len(r.batch.Tokens) > 0 {
		tf := time.Now()
		err := r.m.Forward(r.ws, r.pool, &r.batch, r.kv, r.logits[:r.nLogits*r.vocab])
		r.stats.Forward += time.Since(tf)
		if err != nil {
			return nil, fmt.Errorf("runner: forward: %w", err)
		}
	}
	r.poolOutputs(so, out)
	r.promptLogprobs(so, out)
	ts := time.Now()
	r.sample(so, out)
	now := time.Now()
	r.stats.Sample += now.Sub(ts)
	r.stats.Execute += now.Sub(t0)
	r.stats.Steps++
	return out, nil
}

// prepare builds r.batch and r.rows from so.
func (r *Runner) prepare(so *sched.SchedulerOutput) error {
	nTok, nBlk := 0, 0
	for i := range so.Requests {
		req := &so.Requests[i]
		if len(req.TokenIDs) == 0 {
			return fmt.Errorf("%w: request %q schedules no tokens", ErrInvalidStep, req.ID)
		}
		if req.Sample && req.Params == nil && req.Pool == nil {
			return fmt.Errorf("%w: request %q samples without params", ErrInvalidStep, req.ID)
		}
		nTok += len(req.TokenIDs)
		nBlk += len(req.BlockTable)
	}
	b := &r.batch
	b.Tokens = b.Tokens[:0]
	b.Seqs = b.Seqs[:0]
	r.rows = r.rows[:0]
	r.nLogits = 0
	if cap(r.blockIDs) < nBlk {
		r.blockIDs = make([]int32, 0, nBlk)
	}
	if cap(b.Tokens) < nTok {
		b.Tokens = make([]int32, 0, nTok)
	}
	ids := r.blockIDs[:0]
	hidden := r.hiddenBuffer(so)
	for i := range so.Requests {
		req := &so.Requests[i]
		b.Tokens = append(b.Tokens, req.TokenIDs...)
		start := len(ids)
		for _, id := range req.BlockTable {
			ids = append(ids, int32(id))
		}
		seq := model.Seq{
			NumTokens:  len(req.TokenIDs),
			Start:      req.Start,
			BlockTable: ids[start:len(ids):len(ids)],
			NeedLogits: req.Sample && req.Pool == nil,
			NumLogits:  1 + len(req.SpecTokenIDs),
		}
		if req.Pool != nil || req.PromptLogprobsEnd > req.PromptLogprobsStart {
			n := len(req.TokenIDs) * r.m.Config.Dim
			seq.Hidden, hidden = hidden[:n:n], hidden[n:]
		}
		b.Seqs = append(b.Seqs, seq)
		if seq.NeedLogits {
			rw := row{req: i, off: r.nLogits}
			r.nLogits += seq.NumLogits
			if s := req.Params.Seed; s != nil {
				rw.rng = sampling.SeededRNG(*s, len(req.OutputTokenIDs))
			} else if !req.Params.Greedy() {
				rw.rng = sampling.NewRNG(r.rng.Uint64())
			}
			r.rows = append(r.rows, rw)
		}
	}
	r.blockIDs = ids
	if need := r.nLogits * r.vocab; len(r.logits) < need {
		r.logits = make([]float32, need)
	}
	return nil
}

// sample fills out from the logits rows, in parallel over the pool's
// threads (thread w takes rows w, w+T, w+2T, … with its own Sampler).
func (r *Runner) sample(so *sched.SchedulerOutput, out *sched.RunnerOutput) {
	for i := range out.SampledTokenIDs {
		out.SampledTokenIDs[i] = -1
	}
	var lps []*sampling.Logprobs
	for _, rw := range r.rows {
		if so.Requests[rw.req].Params.Logprobs != nil {
			lps = make([]*sampling.Logprobs, len(so.Requests))
			break
		}
	}
	out.Logprobs = lps
	threads := min(len(r.samplers), len(r.rows))
	if len(r.specOut) < len(r.samplers) {
		r.specOut = make([][]int32, len(r.samplers))
	}
	for _, rw := range r.rows {
		if len(so.Requests[rw.req].SpecTokenIDs) > 0 {
			out.SpecTokenIDs = make([][]int32, len(so.Requests))
			if lps != nil {
				out.SpecLogprobs = make([][]*sampling.Logprobs, len(so.Requests))
			}
			break
		}
	}
	work := func(lo, hi int) {
		for w := lo; w < hi; w++ {
			for j := w; j < len(r.rows); j += threads {
				r.sampleRow(w, &r.rows[j], so, out)
			}
		}
	}
	if threads <= 1 || !r.parallelWorth(so) {
		threads = 1
		work(0, 1)
	} else {
		r.pool.ParallelFor(threads, work)
	}
	for _, rw := range r.rows {
		out.MaskTimes = append(out.MaskTimes, rw.masks...)
	}
}

// sampleRow samples request rw's token on worker w; with drafts, it goes on
// sampling the position after each draft while the token sampled before
// it equals that draft (speculative decoding's verification: drafts are
// one token per position, so this is rejection sampling against a one-hot
// draft distribution, and each position draws from the target
// distribution with the generator a run without drafts would use there).
func (r *Runner) sampleRow(w int, rw *row, so *sched.SchedulerOutput, out *sched.RunnerOutput) {
	s := &r.samplers[w]
	req := &so.Requests[rw.req]
	c := req.Constraint
	outToks := req.OutputTokenIDs
	for j := 0; ; j++ {
		logits := r.logits[(rw.off+j)*r.vocab : (rw.off+j+1)*r.vocab]
		if c != nil {
			t0 := time.Now()
			r.constrain(w, logits, c)
			rw.masks = append(rw.masks, time.Since(t0))
		}
		if seed := req.Params.Seed; seed != nil && j > 0 {
			rw.rng = sampling.SeededRNG(*seed, len(outToks))
		}
		tok, lp := s.Sample(logits, req.Params, req.PromptTokenIDs, outToks, r.cfg.EOSTokenID, &rw.rng)
		if j == 0 {
			out.SampledTokenIDs[rw.req] = tok
			if lp != nil {
				out.Logprobs[rw.req] = lp
			}
		} else {
			out.SpecTokenIDs[rw.req] = append(out.SpecTokenIDs[rw.req], tok)
			if lp != nil {
				out.SpecLogprobs[rw.req] = append(out.SpecLogprobs[rw.req], lp)
			}
		}
		if j == len(req.SpecTokenIDs) || tok != req.SpecTokenIDs[j] {
			return
		}
		// The draft is accepted: the next position follows it.
		if j == 0 {
			outToks = append(r.specOut[w][:0], outToks...)
		}
		outToks = append(outToks, tok)
		r.specOut[w] = outToks
		if c != nil {
			if j == 0 {
				c = c.Fork()
			}
			if c.Advance(tok) != nil {
				return // cannot happen: tok was sampled under c's mask
			}
		}
	}
}

// promptLogChunk is how many prompt positions promptLogprobs projects to
// logits at a time: it bounds the buffer at promptLogChunk × vocabulary.
const promptLogChunk = 32

// promptLogprobs scores the prompt tokens of the requests with a
// prompt-logprobs range from the hidden states the forward pass wrote
// (model.Seq.Hidden: every token of those requests of the step):
// the logits of position p give the logprob of prompt token p+1 and the
// top-N of that position, as Sample's logprobs do for a sampled token.
func (r *Runner) promptLogprobs(so *sched.SchedulerOutput, out *sched.RunnerOutput) {
	dim := r.m.Config.Dim
	for i := range so.Requests {
		req := &so.Requests[i]
		lo, hi := req.PromptLogprobsStart, req.PromptLogprobsEnd
		if hi <= lo {
			continue
		}
		if out.PromptLogprobs == nil {
			out.PromptLogprobs = make([][]*sampling.Logprobs, len(so.Requests))
		}
		hid := r.batch.Seqs[i].Hidden // the request's tokens of the step, in order
		lps := make([]*sampling.Logprobs, 0, hi-lo)
		for p := lo; p < hi; p += promptLogChunk {
			n := min(promptLogChunk, hi-p)
			if need := n * r.vocab; len(r.promptLogits) < need {
				r.promptLogits = make([]float32, need)
			}
			first := p - req.Start
			r.m.Project(r.pool, r.promptLogits, hid[first*dim:(first+n)*dim], n)
			for j := 0; j < n; j++ {
				raw := r.promptLogits[j*r.vocab : (j+1)*r.vocab]
				lps = append(lps, r.samplers[0].Logprobs(raw, req.PromptTokenIDs[p+j+1], *req.Params.PromptLogprobs))
			}
		}
		out.PromptLogprobs[i] = lps
	}
}

// constrain masks logits with the sequence's structured-output state, in
// worker w's buffer. When the state allows nothing, every logit is −Inf
// and the sampler's pick is refused by the scheduler's Advance, which
// finishes the request with reason error.
func (r *Runner) constrain(w int, logits []float32, c sampling.Constraint) {
	words := (r.vocab + 63) / 64
	if len(r.masks[w]) < words {
		r.masks[w] = make([]uint64, words)
	}
	m := r.masks[w][:words]
	c.Mask(m)
	sampling.ApplyMask(logits, m)
}

// parallelWorth reports whether sampling is heavy enough to hand to the
// pool: greedy rows are one argmax each, cheaper than the hand-off unless
// there are many.
func (r *Runner) parallelWorth(so *sched.SchedulerOutput) bool {
	cost := 0
	for _, rw := range r.rows {
		p := so.Requests[rw.req].Params
		if p.Greedy() && p.Logprobs == nil {
			cost++
		} else {
			cost += 8
		}
	}
	return cost*r.vocab >= 1<<18
}
