package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// genRequest is a validated generation request, ready for the engine.
type genRequest struct {
	id       string
	model    string
	arrival  time.Time
	promptID []int32
	params   sampling.Params
	priority int
	stream   bool
	usage    *openai.StreamOptions
	echo     string // completions "echo": the prompt text put before each choice's text
}

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

// start finishes validation (max-model-len, sampling ranges) and hands the
// request to the engine. Nothing reaches the engine unless it is valid.
// serveGenerate is the flow both generation endpoints share: take the
// arrival time first (before decoding, template rendering and tokenization),
// decode the body, prepare (validate, render, tokenize), start the engine
// request, then stream it, or collect it and write respond's reply.
func serveGenerate[Req any](s *Server, w http.ResponseWriter, r *http.Request,
	prepare func(*Req, time.Time) (*genRequest, error),
	stream func(http.ResponseWriter, *http.Request, *genRequest, *output.Stream),
	respond func(*genRequest, *output.RequestOutput) any) {
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
	st, err := s.start(r, g)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if g.stream {
		stream(w, r, g, st)
		return
	}
	o, err := collect(r.Context(), st)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, respond(g, o))
}

func (s *Server) start(r *http.Request, g *genRequest) (*output.Stream, error) {
	if g.priority != 0 && !s.cfg.PriorityScheduling {
		return nil, &openai.ParamError{Param: "priority", Msg: "priority scheduling is not enabled (start the server with --scheduling-policy priority)"}
	}
	if err := openai.FinishParams(&g.params, len(g.promptID), s.eng.MaxModelLen()); err != nil {
		return nil, err
	}
	if err := s.eng.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", llm.ErrEngineDead, err)
	}
	kind := output.FinalOnly
	if g.stream {
		kind = output.Delta
	}
	if !s.cfg.DisableLogRequests {
		s.log.Info("received request", "id", g.id, "path", r.URL.Path, "prompt_tokens", len(g.promptID),
			"max_tokens", g.params.MaxTokens, "n", g.params.N, "temperature", g.params.Temperature, "stream", g.stream)
	}
	return s.eng.Generate(r.Context(), llm.Request{
		ID:             g.id,
		PromptTokenIDs: g.promptID,
		Params:         g.params,
		Priority:       g.priority,
		ArrivalTime:    g.arrival,
		OutputKind:     kind,
	})
}

// collect reads a stream to its end and returns the last (final) output.
func collect(ctx context.Context, st *output.Stream) (*output.RequestOutput, error) {
	var last *output.RequestOutput
	for {
		o, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			if last == nil {
				return nil, errors.New("httpapi: stream ended without output")
			}
			return last, nil
		}
		if err != nil {
			return nil, err
		}
		last = o
	}
}

// completionTokens counts the generated tokens of a final output.
func completionTokens(o *output.RequestOutput) int {
	n := 0
	for _, c := range o.Outputs {
		n += len(c.TokenIDs)
	}
	return n
}

// streamLoop reads deltas until the stream ends, calling emit for each
// output. It returns nil at the end, ctx's error when the client left, or the
// engine's error (which the caller reports in the stream).
func streamLoop(ctx context.Context, st *output.Stream, emit func(*output.RequestOutput) error) error {
	for {
		o, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := emit(o); err != nil {
			return err
		}
	}
}

// empty reports whether a delta carries nothing to send.
func empty(c *output.CompletionOutput) bool {
	return c.Text == "" && len(c.Logprobs) == 0 && c.FinishReason == 0
}
