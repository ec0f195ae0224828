package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"govllm/internal/llm"
	"govllm/internal/openai"
	"govllm/internal/output"
	"govllm/internal/sampling"
)

// newID returns prefix + 32 random hex digits (vLLM: "cmpl-<uuid hex>").
func newID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// genRequest is a validated generation request, ready for the engine: one
// engine request per prompt (chat has one prompt; completions one or more).
type genRequest struct {
	id       string
	model    string
	arrival  time.Time
	prompts  []genPrompt
	params   sampling.Params // the request's; MaxTokens 0 = fill per prompt
	priority int
	stream   bool
	usage    *openai.StreamOptions
}

// genPrompt is one prompt of a request, i.e. one engine request.
type genPrompt struct {
	ids    []int32
	echo   string          // completions "echo": the prompt text put before each choice's text
	params sampling.Params // the request's params finished for this prompt (by check)
}

// engineID is the engine request id of prompt i: the response id itself
// for a single prompt, "<id>-<i>" with several (as vLLM does).
func (g *genRequest) engineID(i int) string {
	if len(g.prompts) == 1 {
		return g.id
	}
	return g.id + "-" + strconv.Itoa(i)
}

// choiceIndex is the response index of sequence c of prompt i:
// i·n + c (vLLM's order).
func (g *genRequest) choiceIndex(i, c int) int { return i*g.params.N + c }

// checkTokenIDs rejects ids outside the vocabulary.
func (s *Server) checkTokenIDs(param string, ids []int32) error {
	v := int32(s.tok.VocabSize())
	for _, id := range ids {
		if id < 0 || id >= v {
			return &openai.ParamError{Param: param, Msg: fmt.Sprintf("token id %d is out of range [0, %d)", id, v)}
		}
	}
	return nil
}

// serveGenerate is the flow both generation endpoints share: take the
// arrival time first (before decoding, template rendering and tokenization),
// decode the body, prepare (validate, render, tokenize), check every prompt
// against the engine's limits, start one engine request per prompt, then
// stream their merged outputs, or collect them and write respond's reply.
// Nothing reaches the engine unless every prompt is valid; when one
// engine request fails or the client leaves, all of them are aborted.
func serveGenerate[Req any](s *Server, w http.ResponseWriter, r *http.Request,
	prepare func(*Req, time.Time) (*genRequest, error),
	stream func(http.ResponseWriter, *http.Request, *genRequest, *fanIn),
	respond func(*genRequest, []*output.RequestOutput) any) {
	arrival := time.Now()
	var req Req
	if err := openai.Decode(r.Body, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	g, err := prepare(&req, arrival)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.check(g); err != nil {
		s.writeErr(w, r, err)
		return
	}
	src, err := s.start(r, g)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	defer src.close()
	if g.stream {
		stream(w, r, g, src)
		return
	}
	outs, err := src.collect()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, respond(g, outs))
}

// check finishes validation: priority, then each prompt against
// max-model-len and the sampling ranges (an error names the prompt when
// there are several), then the engine's health.
func (s *Server) check(g *genRequest) error {
	if g.priority != 0 && !s.cfg.PriorityScheduling {
		return &openai.ParamError{Param: "priority", Msg: "priority scheduling is not enabled (start the server with --scheduling-policy priority)"}
	}
	tokens := 0 // Σ max_tokens over the prompts; each is at most max-model-len
	for i := range g.prompts {
		p := &g.prompts[i]
		p.params = g.params
		if err := openai.FinishParams(&p.params, len(p.ids), s.eng.MaxModelLen()); err != nil {
			return openai.InPrompt(err, i, len(g.prompts))
		}
		tokens += p.params.MaxTokens
	}
	if err := s.eng.Limits().Check(len(g.prompts), g.params.N, tokens); err != nil {
		return err
	}
	if err := s.eng.Err(); err != nil {
		return fmt.Errorf("%w: %w", llm.ErrEngineDead, err)
	}
	return nil
}

// start hands the checked prompts to the engine, one request each. Several
// share one context derived from the HTTP request's, so that one failing
// (to start, or later) aborts the others; a single prompt needs no more
// than the request's own context.
func (s *Server) start(r *http.Request, g *genRequest) (*fanIn, error) {
	ctx, cancel := r.Context(), context.CancelFunc(func() {})
	if len(g.prompts) > 1 {
		ctx, cancel = context.WithCancel(ctx)
	}
	kind := output.FinalOnly
	if g.stream {
		kind = output.Delta
	}
	streams := make([]*output.Stream, 0, len(g.prompts))
	for i := range g.prompts {
		p := &g.prompts[i]
		id := g.engineID(i)
		if !s.cfg.DisableLogRequests {
			s.log.Info("received request", "id", id, "path", r.URL.Path, "prompt_tokens", len(p.ids),
				"max_tokens", p.params.MaxTokens, "n", p.params.N, "temperature", p.params.Temperature, "stream", g.stream)
		}
		st, err := s.eng.Generate(ctx, llm.Request{
			ID:             id,
			PromptTokenIDs: p.ids,
			Params:         p.params,
			Priority:       g.priority,
			ArrivalTime:    g.arrival,
			OutputKind:     kind,
		})
		if err != nil {
			cancel()
			return nil, err
		}
		streams = append(streams, st)
	}
	return newFanIn(ctx, cancel, streams), nil
}

// completionTokens counts the generated tokens of a final output.
func completionTokens(o *output.RequestOutput) int {
	n := 0
	for _, c := range o.Outputs {
		n += len(c.TokenIDs)
	}
	return n
}

// streamLoop reads the merged deltas until every stream ended, calling emit
// with each output and the index of its prompt. It returns nil at the end,
// ctx's error when the client left, or the engine's error (which the
// caller reports in the stream).
func streamLoop(src *fanIn, emit func(prompt int, o *output.RequestOutput) error) error {
	for {
		i, o, err := src.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := emit(i, o); err != nil {
			return err
		}
	}
}

// empty reports whether a delta carries nothing to send.
func empty(c *output.CompletionOutput) bool {
	return c.Text == "" && len(c.Logprobs) == 0 && c.FinishReason == 0
}
