package httpapi

import (
	"net/http"
	"strings"
	"time"

	"govllm/internal/chattemplate"
	"govllm/internal/openai"
	"govllm/internal/output"
)

// chat serves POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	serveGenerate(s, w, r, s.prepareChat, s.streamChat, s.chatResponse)
}

// chatResponse builds the non-streaming reply from the finished output
// (chat has one prompt).
func (s *Server) chatResponse(g *genRequest, outs []*output.RequestOutput) any {
	o := outs[0]
	resp := openai.ChatCompletionResponse{
		ID: g.id, Object: "chat.completion", Created: s.cfg.Now().Unix(), Model: g.model, SystemFingerprint: s.fingerprint,
		Choices: make([]openai.ChatChoice, 0, len(o.Outputs)),
		Usage:   openai.NewUsage(len(g.prompts[0].ids), completionTokens(o), o.NumCachedTokens),
	}
	for _, c := range o.Outputs {
		ch := openai.ChatChoice{Index: c.Index, Message: openai.ResponseMessage{Role: "assistant", Content: c.Text},
			FinishReason: openai.FinishReason(c.FinishReason), StopReason: c.StopReason, TokenIDs: g.ids(c.TokenIDs)}
		if g.params.Logprobs != nil {
			ch.Logprobs = openai.ChatLogprobsFrom(c.Logprobs, s.tok.Piece)
		}
		resp.Choices = append(resp.Choices, ch)
	}
	resp.PromptTokenIDs = g.ids(g.prompts[0].ids)
	resp.Timings = s.timings(g, outs)
	return resp
}

func (s *Server) prepareChat(req *openai.ChatCompletionRequest, r *http.Request, arrival time.Time) (*genRequest, error) {
	model, err := s.modelName(req.Model)
	if err != nil {
		return nil, err
	}
	params, err := req.SamplingParams(s.defaults)
	if err != nil {
		return nil, err
	}
	base := baseID(r, req.RequestID)
	text, err := s.renderChat(req.Messages, req.GenerationPrompt(), req.ContinueFinalMessage, req.ChatTemplateKwargs)
	if err != nil {
		return nil, err
	}
	return &genRequest{id: "chatcmpl-" + base, base: base, model: model, arrival: arrival, params: params,
		prompts: []genPrompt{{ids: s.tok.Encode(text, req.AddSpecialTokens)}}, priority: req.Priority, truncate: req.TruncatePromptTokens, tokenIDs: req.ReturnTokenIDs, user: req.User, stream: req.Stream, usage: req.StreamOptions}, nil
}

// renderChat applies the chat template. With continueFinal the text is cut
// right after the final (assistant) message's content, so the model goes on
// with it (vLLM continue_final_message).
func (s *Server) renderChat(msgs []openai.ChatMessage, genPrompt, continueFinal bool, kwargs map[string]any) (string, error) {
	cm := make([]chattemplate.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chattemplate.Message{Role: m.Role, Content: string(m.Content)}
	}
	text, err := s.tmpl.Render(cm, chattemplate.Options{AddGenerationPrompt: genPrompt, Kwargs: kwargs})
	if err != nil {
		return "", err
	}
	if continueFinal {
		last := string(msgs[len(msgs)-1].Content)
		if i := strings.LastIndex(text, last); i >= 0 && last != "" {
			text = text[:i+len(last)]
		}
	}
	return text, nil
}

// streamChat sends the assistant role first for every choice (as OpenAI
// and vLLM do), then each choice's deltas, a finish chunk per choice, and
// with include_usage one usage chunk.
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, g *genRequest, src *fanIn) {
	created := s.cfg.Now().Unix()
	chunk := func(choices []openai.ChatChunkChoice, usage *openai.Usage) openai.ChatCompletionChunk {
		return openai.ChatCompletionChunk{ID: g.id, Object: "chat.completion.chunk", Created: created, Model: g.model, Choices: choices, Usage: usage, SystemFingerprint: s.fingerprint}
	}
	roles := func(sse *sseWriter) error {
		empty := ""
		for i := range g.params.N {
			c := chunk([]openai.ChatChunkChoice{{Index: i, Delta: openai.ChatDelta{Role: "assistant", Content: &empty}}}, nil)
			if i == 0 {
				c.PromptTokenIDs = g.ids(g.prompts[0].ids)
			}
			if err := sse.write(c); err != nil {
				return err
			}
		}
		return sse.flush()
	}
	s.streamDeltas(w, r, g, src, roles, func(_ int, c *output.CompletionOutput, u *openai.Usage) any {
		text := c.Text
		ch := openai.ChatChunkChoice{Index: c.Index, Delta: openai.ChatDelta{Content: &text},
			FinishReason: openai.FinishReason(c.FinishReason), StopReason: c.StopReason, TokenIDs: g.ids(c.TokenIDs)}
		if g.params.Logprobs != nil {
			ch.Logprobs = openai.ChatLogprobsFrom(c.Logprobs, s.tok.Piece)
		}
		return chunk([]openai.ChatChunkChoice{ch}, u)
	}, func(u *openai.Usage, timings any) any {
		c := chunk([]openai.ChatChunkChoice{}, u)
		c.Timings = timings
		return c
	})
}

// ids is ids with return_token_ids, else nil (left out of the response).
func (g *genRequest) ids(ids []int32) []int32 {
	if !g.tokenIDs {
		return nil
	}
	return ids
}
