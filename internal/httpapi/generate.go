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
	ids  []int32
	echo string        // completions "echo": the prompt text put before each choice's text
	pr   *llm.Prepared // the engine request, validated (by check)
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

// check validates every prompt through the engine's one request path
// (llm.Preparer; an error names the prompt when there are several), then
// the engine's health. Nothing is started before every prompt is valid.
func (s *Server) check(g *genRequest) error {
	reqs := make([]llm.Request, len(g.prompts))
	for i := range g.prompts {
		reqs[i] = llm.Request{ID: g.engineID(i), PromptTokenIDs: g.prompts[i].ids, Params: g.params,
			Priority: g.priority, ArrivalTime: g.arrival, OutputKind: g.kind()}
	}
	prs, err := s.eng.Prepare(reqs...)
	if err != nil {
		return err
	}
	for i := range g.prompts {
		g.prompts[i].pr = prs[i]
	}
	if err := s.eng.Err(); err != nil {
		return fmt.Errorf("%w: %w", llm.ErrEngineDead, err)
	}
	return nil
}

// kind is how outputs reach the handler: deltas when streaming.
func (g *genRequest) kind() output.Kind {
	if g.stream {
		return output.Delta
	}
	return output.FinalOnly
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
	streams := make([]*output.Stream, 0, len(g.prompts))
	for i := range g.prompts {
		p := &g.prompts[i]
		if !s.cfg.DisableLogRequests {
			q := p.pr.Request()
			s.log.Info("received request", "id", q.ID, "path", r.URL.Path, "prompt_tokens", len(p.ids),
				"max_tokens", q.Params.MaxTokens, "n", q.Params.N, "temperature", q.Params.Temperature, "stream", g.stream)
		}
		st, err := s.eng.Submit(ctx, p.pr)
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
