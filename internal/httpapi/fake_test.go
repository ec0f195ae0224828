package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"govllm/internal/llm"
	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

// fakeEngine produces a deterministic completion: sequence i's token k is
// id 258+k+i (a dummy-vocabulary word), max_tokens tokens, then "length".
// With byPrompt the ids start at 258 + 10·(prompt length) instead, so the
// prompts of a batch get different texts.
type fakeEngine struct {
	tok      *tokenizer.Tokenizer
	maxLen   int
	priority bool // the engine schedules by priority

	calls      atomic.Int64
	aborted    atomic.Int64 // requests whose ctx was cancelled mid-generation
	dead       atomic.Pointer[error]
	closed     atomic.Bool   // Err is llm.ErrClosed (the engine was shut down)
	panicMsg   string        // Generate panics with it when set
	byPrompt   bool          // token ids depend on the prompt length
	holdAfter  int           // > 0: after that many tokens, wait for ctx (disconnect tests)
	failAfter  int           // > 0: after that many tokens, the stream fails (engine death)
	failSuffix string        // failAfter applies only to request ids ending with it ("" = all)
	rejectID   string        // Generate refuses request ids ending with it (engine death)
	started    chan struct{} // closed when a held request reached its hold point
	cancelled  chan struct{} // closed when a request's ctx was cancelled mid-generation

	startedOnce, cancelledOnce sync.Once

	mu        sync.Mutex
	last      llm.Request
	recordAll bool          // keep every request in reqs (not only the last)
	reqs      []llm.Request // with recordAll: every request Generate accepted, in order
	wg        sync.WaitGroup
}

func newFake() *fakeEngine {
	return &fakeEngine{tok: tokenizer.NewDummy(512), maxLen: 256, started: make(chan struct{}), cancelled: make(chan struct{})}
}

func (f *fakeEngine) Tokenizer() *tokenizer.Tokenizer { return f.tok }
func (f *fakeEngine) MaxModelLen() int                { return f.maxLen }

// Err is as AsyncEngine's: the stored cause wrapped in ErrEngineDead.
func (f *fakeEngine) Err() error {
	if f.closed.Load() {
		return llm.ErrClosed
	}
	if e := f.dead.Load(); e != nil {
		return fmt.Errorf("%w: %w", llm.ErrEngineDead, *e)
	}
	return nil
}

func (f *fakeEngine) lastRequest() llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakeEngine) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// firstToken is the id of sequence 0's first token for a prompt.
func (f *fakeEngine) firstToken(promptLen int) int32 {
	if f.byPrompt {
		return int32(258 + 10*promptLen)
	}
	return 258
}

// text is what sequence i of a prompt of promptLen tokens generates in
// tokens steps.
func (f *fakeEngine) text(promptLen, i, tokens int) string {
	ids := make([]int32, tokens)
	for k := range ids {
		ids[k] = f.firstToken(promptLen) + int32(k+i)
	}
	return f.tok.Decode(ids, false)
}

// Prepare validates as the real engine does (llm.Preparer).
func (f *fakeEngine) Prepare(reqs ...llm.Request) ([]*llm.Prepared, error) {
	pp, err := llm.NewPreparer(f.tok, f.maxLen, llm.Limits{}, f.priority)
	if err != nil {
		return nil, err
	}
	return pp.Prepare(reqs...)
}

func (f *fakeEngine) Submit(ctx context.Context, pr *llm.Prepared) (*output.Stream, error) {
	req := pr.Request()
	f.calls.Add(1)
	if f.panicMsg != "" {
		panic(f.panicMsg)
	}
	if err := f.Err(); err != nil {
		return nil, llm.ErrEngineDead
	}
	if req.Params.MaxTokens < 1 || req.Params.Validate() != nil || len(req.PromptTokenIDs)+req.Params.MaxTokens > f.maxLen {
		return nil, errors.New("fake: unvalidated params reached the engine")
	}
	if f.rejectID != "" && strings.HasSuffix(req.ID, f.rejectID) {
		return nil, fmt.Errorf("fake: %w", llm.ErrEngineDead)
	}
	f.mu.Lock()
	f.last = req
	if f.recordAll {
		f.reqs = append(f.reqs, req)
	}
	f.mu.Unlock()
	st := output.NewStream(req.OutputKind)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.run(ctx, req, st)
	}()
	return st, nil
}

func (f *fakeEngine) run(ctx context.Context, req llm.Request, st *output.Stream) {
	if req.Pooling != nil { // an embedding: a vector made of the prompt's ids
		v := make([]float32, 4)
		for i, id := range req.PromptTokenIDs {
			v[i%4] += float32(id)
		}
		st.Put(&output.RequestOutput{RequestID: req.ID, PromptTokenIDs: req.PromptTokenIDs, Finished: true,
			Outputs: []output.CompletionOutput{{FinishReason: stats.FinishStop, Pooled: v}}})
		return
	}
	p := req.Params
	final := &output.RequestOutput{RequestID: req.ID, PromptTokenIDs: req.PromptTokenIDs, Outputs: make([]output.CompletionOutput, p.N)}
	for i := range final.Outputs {
		final.Outputs[i].Index = i
	}
	for k := range p.MaxTokens {
		if f.holdAfter > 0 && k == f.holdAfter {
			f.startedOnce.Do(func() { close(f.started) })
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			f.aborted.Add(1)
			f.cancelledOnce.Do(func() { close(f.cancelled) })
			st.Fail(ctx.Err())
			return
		}
		if f.failAfter > 0 && k == f.failAfter && strings.HasSuffix(req.ID, f.failSuffix) {
			st.Fail(fmt.Errorf("fake: %w", llm.ErrEngineDead))
			return
		}
		delta := &output.RequestOutput{RequestID: req.ID, PromptTokenIDs: req.PromptTokenIDs, Finished: k == p.MaxTokens-1, NumCachedTokens: 0}
		for i := range p.N {
			id := f.firstToken(len(req.PromptTokenIDs)) + int32(k+i)
			c := output.CompletionOutput{Index: i, Text: f.tok.Decode([]int32{id}, false), TokenIDs: []int32{id}}
			if p.Logprobs != nil {
				lp := sampling.Logprobs{Sampled: sampling.TokenLogprob{Token: id, Logprob: -0.25}, Rank: 1}
				for j := range *p.Logprobs {
					lp.Top = append(lp.Top, sampling.TokenLogprob{Token: id + int32(j), Logprob: -0.25 - float32(j)})
				}
				c.Logprobs = []sampling.Logprobs{lp}
			}
			if delta.Finished {
				c.FinishReason = stats.FinishLength
			}
			fo := &final.Outputs[i]
			fo.Text += c.Text
			fo.TokenIDs = append(fo.TokenIDs, c.TokenIDs...)
			fo.Logprobs = append(fo.Logprobs, c.Logprobs...)
			fo.FinishReason = c.FinishReason
			delta.Outputs = append(delta.Outputs, c)
		}
		if req.OutputKind == output.Delta {
			st.Put(delta)
		}
	}
	final.Finished = true
	if req.OutputKind != output.Delta {
		st.Put(final)
	}
}
