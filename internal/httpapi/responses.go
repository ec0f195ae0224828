package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"govllm/internal/apierr"
	"govllm/internal/chattemplate"
	"govllm/internal/openai"
	"govllm/internal/output"
)

// responsesState is what a Responses API request adds to a genRequest.
type responsesState struct {
	req *openai.ResponsesRequest
	// conversation is the previous response's conversation and this
	// request's input, as chat messages (without the instructions).
	conversation []openai.ChatMessage
	store        bool // kept for previous_response_id and GET
	createdAt    int64
}

// responses serves POST /v1/responses: the input items become chat
// messages rendered through the chat template, and the chat answer (its
// reasoning, content and tool calls, as chatOutput makes them) becomes
// output items.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	serveGenerate(s, w, r, s.prepareResponses, s.streamResponses, s.responsesResponse)
}

func (s *Server) prepareResponses(req *openai.ResponsesRequest, r *http.Request, arrival time.Time) (*genRequest, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	model, err := s.modelName(req.Model)
	if err != nil {
		return nil, err
	}
	params, err := req.SamplingParams(s.defaults)
	if err != nil {
		return nil, err
	}
	tools, err := openai.ParseResponsesTools(req.Tools, req.ToolChoice, req.ParallelToolCalls)
	if err != nil {
		return nil, err
	}
	kwargs := req.TemplateKwargs()
	out, err := s.planChatOutput(tools, kwargs, &params)
	if err != nil {
		return nil, err
	}
	conv, cont, err := s.conversation(req)
	if err != nil {
		return nil, err
	}
	text, err := s.renderChat(withInstructions(req.Instructions, conv), tools, !cont, cont, kwargs)
	if errors.Is(err, chattemplate.ErrTemplate) {
		return nil, &apierr.Error{Param: "input", Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	base := baseID(r, req.RequestID)
	user := ""
	if req.User != nil {
		user = *req.User
	}
	return &genRequest{id: "resp_" + base, base: base, model: model, arrival: arrival, params: params, tools: tools, out: out,
		prompts: []genPrompt{{ids: s.tok.Encode(text, false)}}, priority: req.Priority, user: user, stream: req.Stream,
		resp: &responsesState{req: req, conversation: conv, store: s.store != nil && (req.Store == nil || *req.Store), createdAt: s.cfg.Now().Unix()}}, nil
}

// conversation is the previous response's conversation (404 when it is
// not stored) followed by the input; cont reports a partial final
// assistant message to continue.
func (s *Server) conversation(req *openai.ResponsesRequest) (conv []openai.ChatMessage, cont bool, err error) {
	in, err := openai.ParseResponsesInput(req.Input)
	if err != nil {
		return nil, false, err
	}
	if id := req.PreviousResponseID; id != nil {
		prev := s.store.get(*id)
		if prev == nil {
			return nil, false, &apierr.Error{Status: http.StatusNotFound, Param: "previous_response_id", Msg: "Response with id '" + *id + "' not found."}
		}
		conv = slices.Clone(prev.conversation)
	}
	return append(conv, in.Messages...), in.Continue, nil
}

// withInstructions puts the instructions first as a system message.
func withInstructions(instructions *string, conv []openai.ChatMessage) []openai.ChatMessage {
	if instructions == nil || *instructions == "" {
		return conv
	}
	return append([]openai.ChatMessage{{Role: "system", Content: openai.ChatContent(*instructions)}}, conv...)
}

// responsesResponse builds the non-streaming reply and stores it.
func (s *Server) responsesResponse(g *genRequest, outs []*output.RequestOutput) any {
	o := outs[0]
	c := o.Outputs[0]
	finish := openai.FinishReason(c.FinishReason)
	msg, _ := g.out.message(c.Text, finish)
	incomplete := finish != nil && *finish == "length"
	resp := s.newResponse(g, incomplete, outputItems(msg, incomplete), s.responseUsage(g, len(c.TokenIDs), o.NumCachedTokens, msg.Reasoning))
	s.keep(g, resp, msg)
	return resp
}

// outputItems are the output items of an assistant message: its
// reasoning, its content (a message, left out when the answer is only
// tool calls) and its tool calls.
func outputItems(m openai.ResponseMessage, incomplete bool) []any {
	var items []any
	if m.Reasoning != nil {
		items = append(items, &openai.ReasoningItem{Type: "reasoning", ID: itemID("rs"), Summary: []any{},
			Content: []openai.ReasoningText{{Type: "reasoning_text", Text: *m.Reasoning}}, Status: "completed"})
	}
	if m.Content != nil && (*m.Content != "" || len(m.ToolCalls) == 0) {
		items = append(items, &openai.MessageItem{Type: "message", ID: itemID("msg"), Status: itemStatus(incomplete), Role: "assistant",
			Content: []openai.OutputText{openai.NewOutputText(*m.Content)}})
	}
	for _, tc := range m.ToolCalls {
		items = append(items, &openai.FunctionCallItem{Type: "function_call", ID: itemID("fc"), CallID: tc.ID,
			Name: tc.Function.Name, Arguments: tc.Function.Arguments, Status: "completed"})
	}
	return items
}

func itemStatus(incomplete bool) string {
	if incomplete {
		return "incomplete"
	}
	return "completed"
}

// itemID is an output item id: prefix, "_", 32 random hex digits.
func itemID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// newResponse is the response object: the output and usage, and the echo
// of the request's parameters as served (vLLM's from_request).
func (s *Server) newResponse(g *genRequest, incomplete bool, items []any, usage *openai.ResponseUsage) *openai.Response {
	req := g.resp.req
	p := g.prompts[0].pr.Request().Params
	if items == nil {
		items = []any{}
	}
	resp := &openai.Response{ID: g.id, Object: "response", CreatedAt: g.resp.createdAt, Status: "completed",
		Instructions: req.Instructions, MaxOutputTokens: p.MaxTokens, MaxToolCalls: req.MaxToolCalls, Metadata: req.Metadata,
		Model: g.model, Output: items, ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		PreviousResponseID: req.PreviousResponseID, Reasoning: req.Reasoning, ServiceTier: "auto", Store: g.resp.store,
		Temperature: f32(p.Temperature), TopP: f32(p.TopP), Text: openai.ResponsesText{Format: &openai.ResponsesTextFormat{Type: "text"}},
		ToolChoice: openai.ToolChoiceEcho(g.tools), Tools: openai.ResponseToolsEcho(g.tools), Truncation: "disabled", Usage: usage, User: req.User}
	if req.ServiceTier != nil {
		resp.ServiceTier = *req.ServiceTier
	}
	if req.Text != nil && req.Text.Format != nil {
		resp.Text = *req.Text
	}
	if incomplete {
		resp.Status, resp.IncompleteDetails = "incomplete", &openai.IncompleteDetails{Reason: "max_output_tokens"}
	}
	return resp
}

// f32 is v as the shortest float64 that prints as v does (0.7, not
// 0.699999988079071).
func f32(v float32) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return f
}

// responseUsage counts the tokens; the reasoning tokens are the reasoning
// text's, encoded again.
func (s *Server) responseUsage(g *genRequest, generated, cached int, reasoning *string) *openai.ResponseUsage {
	r := 0
	if reasoning != nil && *reasoning != "" {
		r = len(s.tok.Encode(*reasoning, false))
	}
	return openai.NewResponseUsage(len(g.prompts[0].ids), generated, cached, min(r, generated))
}

// keep stores a finished response (unless store is false) with its
// conversation extended by the answer (its content and tool calls; the
// reasoning does not carry over, as in vLLM).
func (s *Server) keep(g *genRequest, resp *openai.Response, m openai.ResponseMessage) {
	if !g.resp.store {
		return
	}
	am := openai.ChatMessage{Role: "assistant", Parts: []string{}}
	if m.Content != nil {
		am.Content, am.Parts = openai.ChatContent(*m.Content), nil
	}
	for _, tc := range m.ToolCalls {
		am.ToolCalls = append(am.ToolCalls, openai.MessageToolCall{ID: tc.ID, Type: "function", Function: tc.Function})
	}
	conv := append(slices.Clone(g.resp.conversation), am)
	s.store.put(resp.ID, &storedResponse{resp: resp, conversation: conv})
}

// getResponse serves GET /v1/responses/{response_id}: a stored response
// (vLLM's retrieve; its stream replay of background responses is not
// supported).
func (s *Server) getResponse(w http.ResponseWriter, r *http.Request) {
	st, err := s.stored(r)
	if err == nil {
		q := r.URL.Query()
		for _, k := range slices.Sorted(maps.Keys(q)) {
			if v := q[k]; k != "stream" || len(v) != 1 || v[0] != "false" {
				err = apierr.New(k, "query parameter %q is not supported", k)
				break
			}
		}
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st.resp)
}

// cancelResponse serves POST /v1/responses/{response_id}/cancel as vLLM
// does for a response that is not a background one: every stored
// response has finished, so it is a 400 (404 when not stored).
func (s *Server) cancelResponse(w http.ResponseWriter, r *http.Request) {
	if _, err := s.stored(r); err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeError(w, http.StatusBadRequest, "response_id", "Cannot cancel a synchronous response.")
}

// stored is the response the path names: 400 for an id not starting
// with "resp", 404 when it is not stored (vLLM's errors).
func (s *Server) stored(r *http.Request) (*storedResponse, error) {
	id := r.PathValue("response_id")
	if len(id) < 4 || id[:4] != "resp" {
		return nil, apierr.New("response_id", "Invalid 'response_id': '%s'. Expected an ID that begins with 'resp'.", id)
	}
	st := s.store.get(id)
	if st == nil {
		return nil, &apierr.Error{Status: http.StatusNotFound, Param: "response_id", Msg: "Response with id '" + id + "' not found."}
	}
	return st, nil
}
