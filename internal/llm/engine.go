package llm

import (
	"context"
	"errors"
	"fmt"

	"govllm/internal/core"
	"govllm/internal/output"
	"govllm/internal/sched"
	"govllm/internal/tokenizer"
)

// Engine is the synchronous front end (vLLM LLMEngine): the caller adds
// requests and calls Step until HasUnfinished is false. It is not safe for
// concurrent use; the core it wraps must not be used by anyone else.
type Engine struct {
	*Preparer // Prepare, Tokenizer, MaxModelLen
	core      *core.Engine
	tok       *tokenizer.Tokenizer
	p         pipeline
}

// New returns a synchronous front end over c. Every logger receives every
// step's statistics.
func New(cfg Config, c *core.Engine, tok *tokenizer.Tokenizer, loggers ...StatLogger) (*Engine, error) {
	if c == nil || tok == nil {
		return nil, errors.New("llm: New needs a core and a tokenizer")
	}
	pp, err := newPreparer(cfg, c, tok)
	if err != nil {
		return nil, err
	}
	e := &Engine{Preparer: pp, core: c, tok: tok, p: newPipeline(tok, loggers)}
	e.p.always = cfg.RequestStats
	return e, nil
}

// AddRequest prepares r and submits it.
func (e *Engine) AddRequest(r Request) error {
	prs, err := e.Prepare(r)
	if err != nil {
		return err
	}
	return e.Submit(prs[0])
}

// Submit hands a prepared request to the core. Errors:
// output.ErrDuplicateID, or the core's.
func (e *Engine) Submit(pr *Prepared) error {
	if _, err := e.p.proc.AddRequest(pr.out); err != nil {
		return err
	}
	for i := range pr.engine {
		if err := e.core.AddRequest(pr.engine[i]); err != nil {
			ids := make([]sched.RequestID, i)
			for j := range i {
				ids[j] = pr.engine[j].ID
			}
			e.core.Abort(ids...)
			e.p.proc.Drop(pr.out.ID)
			return fmt.Errorf("llm: adding %s: %w", pr.engine[i].ID, err)
		}
	}
	return nil
}

// Abort cancels user requests: the core frees their blocks, and the next
// step reports them finished with reason abort (counted as client aborts).
func (e *Engine) Abort(ids ...string) {
	var seqs []sched.RequestID
	for _, id := range ids {
		seqs = append(seqs, e.p.proc.Abort(id)...)
	}
	if len(seqs) > 0 {
		e.core.Abort(seqs...)
	}
}

// HasUnfinished reports whether a request is in flight or the core still
// has a step to run (including the final stats-only snapshot).
func (e *Engine) HasUnfinished() bool {
	return e.p.proc.HasUnfinished() || e.core.HasWork()
}

// Step runs one engine step through the shared seam and returns the
// request outputs it produced.
func (e *Engine) Step(ctx context.Context) ([]*output.RequestOutput, error) {
	if !e.core.HasWork() {
		return nil, nil
	}
	co, err := e.core.Step(ctx)
	if err != nil {
		return nil, err
	}
	outs, stops := e.p.handle(&co)
	if len(stops) > 0 {
		e.core.Abort(stops...)
	}
	return outs, nil
}

// Generate runs reqs to completion and returns their final outputs in
// order (vLLM LLM.generate). Requests are forced to output.FinalOnly. If
// ctx ends first, the requests are aborted and ctx's error returned.
func (e *Engine) Generate(ctx context.Context, reqs []Request) ([]*output.RequestOutput, error) {
	index := make(map[string]int, len(reqs))
	var added []string
	for i, r := range reqs {
		r.OutputKind = output.FinalOnly
		if err := e.AddRequest(r); err != nil {
			e.Abort(added...)
			return nil, fmt.Errorf("llm: request %d (%q): %w", i, r.ID, err)
		}
		index[r.ID] = i
		added = append(added, r.ID)
	}
	results := make([]*output.RequestOutput, len(reqs))
	for left := len(reqs); left > 0 || e.HasUnfinished(); {
		if err := ctx.Err(); err != nil {
			e.Abort(added...)
			return nil, err
		}
		outs, err := e.Step(ctx)
		if err != nil {
			e.Abort(added...)
			return nil, err
		}
		for _, o := range outs {
			if i, ok := index[o.RequestID]; ok && o.Finished {
				results[i] = o
				left--
			}
		}
		if left > 0 && !e.HasUnfinished() {
			return nil, fmt.Errorf("llm: core idle with %d requests unfinished", left)
		}
	}
	return results, nil
}
