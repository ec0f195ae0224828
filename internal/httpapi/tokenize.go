package httpapi

import (
	"net/http"

	"govllm/internal/apierr"
	"govllm/internal/llm"
	"govllm/internal/openai"
)

// tokenize serves POST /tokenize: a prompt, or chat messages rendered with
// the chat template, to token ids.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req openai.TokenizeRequest
	if err := openai.DecodeRequest(r.Body, &req, s.onUnknown()); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if _, err := s.modelName(req.Model); err != nil {
		s.writeErr(w, r, err)
		return
	}
	ids, err := s.tokenizeIDs(&req)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if ids == nil {
		ids = []int32{}
	}
	resp := openai.TokenizeResponse{Count: len(ids), MaxModelLen: s.eng.MaxModelLen(), Tokens: ids}
	if req.ReturnTokenStrs {
		resp.TokenStrs = make([]string, len(ids))
		for i, id := range ids {
			resp.TokenStrs[i] = s.tok.Piece(id)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// tokenizeIDs encodes the prompt form (add_special_tokens default true) or
// the chat form (rendered with the chat template and the request's tools;
// add_special_tokens default false, as in vLLM).
func (s *Server) tokenizeIDs(req *openai.TokenizeRequest) ([]int32, error) {
	if req.Prompt != nil {
		if err := req.CheckPrompt(); err != nil {
			return nil, err
		}
		return s.tok.Encode(*req.Prompt, req.AddSpecialTokens == nil || *req.AddSpecialTokens), nil
	}
	if len(req.Messages) == 0 {
		return nil, apierr.New("prompt", "prompt or messages is required")
	}
	tools, gen, err := req.CheckChat()
	if err != nil {
		return nil, err
	}
	text, err := s.renderChat(req.Messages, tools, gen, req.ContinueFinalMessage, req.ChatTemplateKwargs)
	if err != nil {
		return nil, err
	}
	return s.tok.Encode(text, req.AddSpecialTokens != nil && *req.AddSpecialTokens), nil
}

// detokenize serves POST /detokenize.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	var req openai.DetokenizeRequest
	if err := openai.Decode(r.Body, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if _, err := s.modelName(req.Model); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := llm.CheckTokenIDs(s.tok, "tokens", req.Tokens); err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, openai.DetokenizeResponse{Prompt: s.tok.Decode(req.Tokens, false)})
}
