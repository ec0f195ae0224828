package httpapi

import (
	"net/http"
	"time"

	"govllm/internal/openai"
	"govllm/internal/output"
)

// completions serves POST /v1/completions.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	serveGenerate(s, w, r, s.prepareCompletion, s.streamCompletion, s.completionResponse)
}

// completionResponse builds the non-streaming reply from the finished output.
func (s *Server) completionResponse(g *genRequest, o *output.RequestOutput) any {
	resp := openai.CompletionResponse{
		ID: g.id, Object: "text_completion", Created: s.cfg.Now().Unix(), Model: g.model,
		Choices: make([]openai.CompletionChoice, 0, len(o.Outputs)),
		Usage:   openai.NewUsage(len(g.promptID), completionTokens(o), o.NumCachedTokens),
	}
	for _, c := range o.Outputs {
		ch := openai.CompletionChoice{Index: c.Index, Text: g.echo + c.Text, FinishReason: openai.FinishReason(c.FinishReason), StopReason: c.StopReason}
		if g.params.Logprobs != nil {
			ch.Logprobs, _ = openai.CompletionLogprobsFrom(c.Logprobs, s.tok.Piece, 0)
		}
		resp.Choices = append(resp.Choices, ch)
	}
	return resp
}

func (s *Server) prepareCompletion(req *openai.CompletionRequest, arrival time.Time) (*genRequest, error) {
	model, err := s.modelName(req.Model)
	if err != nil {
		return nil, err
	}
	params, err := req.SamplingParams(s.defaults)
	if err != nil {
		return nil, err
	}
	g := &genRequest{id: newID("cmpl-"), model: model, arrival: arrival, params: params,
		priority: req.Priority, stream: req.Stream, usage: req.StreamOptions}
	if req.Prompt.IsTokens {
		if err := s.checkTokenIDs("prompt", req.Prompt.TokenIDs); err != nil {
			return nil, err
		}
		g.promptID = req.Prompt.TokenIDs
		if req.Echo {
			g.echo = s.tok.Decode(g.promptID, false)
		}
	} else {
		g.promptID = s.tok.Encode(req.Prompt.Text, true)
		if req.Echo {
			g.echo = req.Prompt.Text
		}
	}
	if err := s.checkTokenIDs("stop_token_ids", params.StopTokenIDs); err != nil {
		return nil, err
	}
	return g, nil
}

func (s *Server) streamCompletion(w http.ResponseWriter, r *http.Request, g *genRequest, st *output.Stream) {
	sse := startSSE(w)
	created := s.cfg.Now().Unix()
	offsets := make([]int, g.params.N)
	echoed := make([]bool, g.params.N)
	generated := 0
	chunk := func(choices []openai.CompletionChoice, usage *openai.Usage) openai.CompletionResponse {
		return openai.CompletionResponse{ID: g.id, Object: "text_completion", Created: created, Model: g.model, Choices: choices, Usage: usage}
	}
	continuous := g.usage != nil && g.usage.IncludeUsage && g.usage.ContinuousUsageStats
	err := streamLoop(r.Context(), st, func(o *output.RequestOutput) error {
		for i := range o.Outputs {
			c := &o.Outputs[i]
			generated += len(c.TokenIDs)
			if empty(c) {
				continue
			}
			ch := openai.CompletionChoice{Index: c.Index, Text: c.Text, FinishReason: openai.FinishReason(c.FinishReason), StopReason: c.StopReason}
			if c.Index < len(echoed) && !echoed[c.Index] {
				echoed[c.Index] = true
				ch.Text = g.echo + ch.Text
			}
			if g.params.Logprobs != nil && c.Index < len(offsets) {
				ch.Logprobs, offsets[c.Index] = openai.CompletionLogprobsFrom(c.Logprobs, s.tok.Piece, offsets[c.Index])
			}
			var u *openai.Usage
			if continuous {
				u = openai.NewUsage(len(g.promptID), generated, o.NumCachedTokens)
			}
			if err := sse.write(chunk([]openai.CompletionChoice{ch}, u)); err != nil {
				return err
			}
		}
		if o.Finished { // the last output: [DONE] follows and flushes
			if g.usage != nil && g.usage.IncludeUsage {
				return sse.write(chunk([]openai.CompletionChoice{}, openai.NewUsage(len(g.promptID), generated, o.NumCachedTokens)))
			}
			return nil
		}
		return sse.flush()
	})
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left; the engine request is aborted with the context
		}
		sse.fail(err)
	}
	sse.done()
}
