package httpapi

import (
	"net/http"
	"strings"
	"time"

	"govllm/internal/chattemplate"
	"govllm/internal/jsonvalue"
	"govllm/internal/openai"
	"govllm/internal/output"
	"govllm/internal/stats"
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
		msg, finish := g.out.message(c.Text, openai.FinishReason(c.FinishReason))
		ch := openai.ChatChoice{Index: c.Index, Message: msg,
			FinishReason: finish, StopReason: c.StopReason, TokenIDs: g.ids(c.TokenIDs)}
		if g.params.Logprobs != nil {
			ch.Logprobs = openai.ChatLogprobsFrom(c.Logprobs, s.tok.Piece)
		}
		resp.Choices = append(resp.Choices, ch)
	}
	resp.PromptTokenIDs = g.ids(g.prompts[0].ids)
	if o.PromptLogprobs != nil {
		resp.PromptLogprobs = openai.PromptLogprobsFrom(o.PromptLogprobs, s.tok.Piece)
	}
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
	tools, err := openai.ParseTools(req.Tools, req.ToolChoice, req.ParallelToolCalls)
	if err != nil {
		return nil, err
	}
	out, err := s.planChatOutput(tools, req.ChatTemplateKwargs, &params)
	if err != nil {
		return nil, err
	}
	base := baseID(r, req.RequestID)
	text, err := s.renderChat(req.Messages, tools, req.GenerationPrompt(), req.ContinueFinalMessage, req.ChatTemplateKwargs)
	if err != nil {
		return nil, err
	}
	return &genRequest{id: "chatcmpl-" + base, base: base, model: model, arrival: arrival, params: params, tools: tools, out: out,
		prompts: []genPrompt{{ids: s.tok.Encode(text, req.AddSpecialTokens)}}, priority: req.Priority, truncate: req.TruncatePromptTokens, tokenIDs: req.ReturnTokenIDs, user: req.User, stream: req.Stream, usage: req.StreamOptions}, nil
}

// renderChat applies the chat template with the request's tools (nil: the
// template's tools variable stays undefined). With continueFinal the text
// is cut right after the final (assistant) message's content, so the model
// goes on with it (vLLM continue_final_message).
func (s *Server) renderChat(msgs []openai.ChatMessage, tools *openai.ChatTools, genPrompt, continueFinal bool, kwargs *jsonvalue.Object) (string, error) {
	text, err := s.tmpl.Render(templateMessages(msgs), chattemplate.Options{AddGenerationPrompt: genPrompt, Tools: templateTools(tools), Kwargs: templateKwargs(kwargs)})
	if err != nil {
		return "", err
	}
	if continueFinal {
		// transformers cuts after the final message's content, or after its
		// last text part when the template takes content as a list.
		final := msgs[len(msgs)-1]
		last := string(final.Content)
		if s.tmpl.ContentFormat() == "openai" && len(final.Parts) > 0 {
			last = final.Parts[len(final.Parts)-1]
		}
		if i := strings.LastIndex(text, last); i >= 0 && last != "" {
			text = text[:i+len(last)]
		}
	}
	return text, nil
}

// templateMessages converts the wire messages for the chat template.
func templateMessages(msgs []openai.ChatMessage) []chattemplate.Message {
	cm := make([]chattemplate.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chattemplate.Message{Role: m.Role, Content: string(m.Content), Parts: m.Parts, ToolCallID: m.ToolCallID, Name: m.Name, Reasoning: m.Reasoning}
		for _, c := range m.ToolCalls {
			cm[i].ToolCalls = append(cm[i].ToolCalls, chattemplate.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
	}
	return cm
}

// templateTools converts the parsed tools (nil: none).
func templateTools(t *openai.ChatTools) []chattemplate.Tool {
	if t == nil {
		return nil
	}
	out := make([]chattemplate.Tool, len(t.Tools))
	for i, ft := range t.Tools {
		out[i] = chattemplate.Tool{Name: ft.Name, Description: ft.Description, Strict: ft.Strict}
		if ft.Parameters != nil {
			out[i].Parameters = ft.Parameters
		}
	}
	return out
}

// templateKwargs turns chat_template_kwargs into template variables (the
// values keep the client's key order).
func templateKwargs(kw *jsonvalue.Object) map[string]any {
	if kw == nil {
		return nil
	}
	out := make(map[string]any, kw.Len())
	for _, k := range kw.Keys() {
		out[k], _ = kw.Get(k)
	}
	return out
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
	shapers := make([]*chatStream, g.params.N)
	for i := range shapers {
		shapers[i] = g.out.newStream()
	}
	s.streamDeltas(w, r, g, src, roles, func(_ int, _ *output.RequestOutput, c *output.CompletionOutput, u *openai.Usage) any {
		delta, finish := shapers[c.Index].delta(c.Text, c.FinishReason != stats.FinishNone, openai.FinishReason(c.FinishReason))
		ch := openai.ChatChunkChoice{Index: c.Index, Delta: delta,
			FinishReason: finish, StopReason: c.StopReason, TokenIDs: g.ids(c.TokenIDs)}
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
