package httpapi

import (
	"context"
	"errors"
	"fmt"
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
type fakeEngine struct {
	tok    *tokenizer.Tokenizer
	maxLen int

	calls     atomic.Int64
	dead      atomic.Pointer[error]
	panicMsg  string        // Generate panics with it when set
	holdAfter int           // > 0: after that many tokens, wait for ctx (disconnect tests)
	failAfter int           // > 0: after that many tokens, the stream fails (engine death)
	started   chan struct{} // closed when a held request reached its hold point
	cancelled chan struct{} // closed when a request's ctx was cancelled mid-generation

	mu   sync.Mutex
	last llm.Request
	wg   sync.WaitGroup
}

func newFake() *fakeEngine {
	return &fakeEngine{tok: tokenizer.NewDummy(512), maxLen: 256, started: make(chan struct{}), cancelled: make(chan struct{})}
}

func (f *fakeEngine) Tokenizer() *tokenizer.Tokenizer { return f.tok }
func (f *fakeEngine) MaxModelLen() int                { return f.maxLen }
func (f *fakeEngine) Err() error {
	if e := f.dead.Load(); e != nil {
		return *e
	}
	return nil
}

func (f *fakeEngine) lastRequest() llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakeEngine) Generate(ctx context.Context, req llm.Request) (*output.Stream, error) {
	f.calls.Add(1)
	if f.panicMsg != "" {
		panic(f.panicMsg)
	}
	if err := f.Err(); err != nil {
		return nil, llm.ErrEngineDead
	}
	if req.Params.MaxTokens < 1 || req.Params.Validate() != nil {
		return nil, errors.New("fake: unvalidated params reached the engine")
	}
	f.mu.Lock()
	f.last = req
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
	p := req.Params
	final := &output.RequestOutput{RequestID: req.ID, PromptTokenIDs: req.PromptTokenIDs, Outputs: make([]output.CompletionOutput, p.N)}
	for i := range final.Outputs {
		final.Outputs[i].Index = i
	}
	for k := range p.MaxTokens {
		if f.holdAfter > 0 && k == f.holdAfter {
			close(f.started)
			<-ctx.Done()
			close(f.cancelled)
			st.Fail(ctx.Err())
			return
		}
		if ctx.Err() != nil {
			st.Fail(ctx.Err())
			return
		}
		if f.failAfter > 0 && k == f.failAfter {
			st.Fail(fmt.Errorf("fake: %w", llm.ErrEngineDead))
			return
		}
		delta := &output.RequestOutput{RequestID: req.ID, PromptTokenIDs: req.PromptTokenIDs, Finished: k == p.MaxTokens-1, NumCachedTokens: 0}
		for i := range p.N {
			id := int32(258 + k + i)
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
