package httpapi

import (
	"net/http"
	"slices"
	"time"

	"govllm/internal/apierr"
	"govllm/internal/llm"
	"govllm/internal/openai"
	"govllm/internal/output"
)

// completions serves POST /v1/completions. Each prompt of the request is
// its own engine request with n sequences; choice i·n + c is sequence c of
// prompt i (vLLM serving_completion.py).
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	serveGenerate(s, w, r, s.prepareCompletion, s.streamCompletion, s.completionResponse)
}

// completionResponse builds the non-streaming reply from each prompt's
// finished output: every choice, ordered by index; usage sums the prompts
// (each prompt's tokens once) and every choice's tokens.
func (s *Server) completionResponse(g *genRequest, outs []*output.RequestOutput) any {
	resp := openai.CompletionResponse{
		ID: g.id, Object: "text_completion", Created: s.cfg.Now().Unix(), Model: g.model, SystemFingerprint: s.fingerprint,
		Choices: make([]openai.CompletionChoice, 0, len(outs)*g.params.N),
	}
	var prompt, completion, cached int
	for i, o := range outs {
		p := &g.prompts[i]
		prompt += len(p.ids)
		completion += completionTokens(o)
		cached += o.NumCachedTokens
		for _, c := range o.Outputs {
			ch := openai.CompletionChoice{Index: g.choiceIndex(i, c.Index), Text: p.echo + c.Text,
				FinishReason: openai.FinishReason(c.FinishReason), StopReason: c.StopReason}
			g.addTokenIDs(&ch, i, c.TokenIDs, true)
			if g.params.Logprobs != nil {
				ch.Logprobs, _ = openai.CompletionLogprobsFrom(c.Logprobs, s.tok.Piece, 0)
			}
			resp.Choices = append(resp.Choices, ch)
		}
	}
	slices.SortFunc(resp.Choices, func(a, b openai.CompletionChoice) int { return a.Index - b.Index })
	resp.Usage = openai.NewUsage(prompt, completion, cached)
	resp.Timings = s.timings(g, outs)
	return resp
}

func (s *Server) prepareCompletion(req *openai.CompletionRequest, r *http.Request, arrival time.Time) (*genRequest, error) {
	model, err := s.modelName(req.Model)
	if err != nil {
		return nil, err
	}
	params, err := req.SamplingParams(s.defaults)
	if err != nil {
		return nil, err
	}
	base := baseID(r, req.RequestID)
	g := &genRequest{id: "cmpl-" + base, base: base, model: model, arrival: arrival, params: params,
		priority: req.Priority, truncate: req.TruncatePromptTokens, tokenIDs: req.ReturnTokenIDs, user: req.User, stream: req.Stream, usage: req.StreamOptions, prompts: make([]genPrompt, len(req.Prompt))}
	for i, in := range req.Prompt {
		p := &g.prompts[i]
		if in.IsTokens {
			if err := llm.CheckTokenIDs(s.tok, "prompt", in.TokenIDs); err != nil {
				return nil, apierr.InPrompt(err, i, len(req.Prompt)) // before Decode, for echo
			}
			p.ids = in.TokenIDs
			if req.Echo {
				p.echo = s.tok.Decode(p.ids, false)
			}
		} else {
			p.ids = s.tok.Encode(in.Text, req.SpecialTokens())
			if req.Echo {
				p.echo = in.Text
			}
		}
	}
	return g, nil
}

// streamCompletion sends each choice's deltas as they come, tagged with
// the choice's index (the echo before its first text), a finish chunk per
// choice, then with include_usage one usage chunk summing every prompt.
// continuous_usage_stats puts on each chunk the usage of its prompt so far.
func (s *Server) streamCompletion(w http.ResponseWriter, r *http.Request, g *genRequest, src *fanIn) {
	created := s.cfg.Now().Unix()
	n := len(g.prompts) * g.params.N
	offsets := make([]int, n)
	echoed := make([]bool, n)
	chunk := func(choices []openai.CompletionChoice, usage *openai.Usage) any {
		return openai.CompletionResponse{ID: g.id, Object: "text_completion", Created: created, Model: g.model, Choices: choices, Usage: usage, SystemFingerprint: s.fingerprint}
	}
	s.streamDeltas(w, r, g, src, nil, func(pi int, c *output.CompletionOutput, u *openai.Usage) any {
		idx := g.choiceIndex(pi, c.Index)
		ch := openai.CompletionChoice{Index: idx, Text: c.Text, FinishReason: openai.FinishReason(c.FinishReason), StopReason: c.StopReason}
		first := idx < n && !echoed[idx]
		if first {
			echoed[idx] = true
			ch.Text = g.prompts[pi].echo + ch.Text
		}
		g.addTokenIDs(&ch, pi, c.TokenIDs, first)
		if g.params.Logprobs != nil && idx < n {
			ch.Logprobs, offsets[idx] = openai.CompletionLogprobsFrom(c.Logprobs, s.tok.Piece, offsets[idx])
		}
		return chunk([]openai.CompletionChoice{ch}, u)
	}, func(u *openai.Usage, timings any) any {
		c := chunk([]openai.CompletionChoice{}, u).(openai.CompletionResponse)
		c.Timings = timings
		return c
	})
}

// addTokenIDs sets, with return_token_ids, the choice's generated ids and,
// on its first chunk (or the whole response), prompt pi's ids.
func (g *genRequest) addTokenIDs(ch *openai.CompletionChoice, pi int, ids []int32, first bool) {
	ch.TokenIDs = g.ids(ids)
	if first {
		ch.PromptTokenIDs = g.ids(g.prompts[pi].ids)
	}
}
