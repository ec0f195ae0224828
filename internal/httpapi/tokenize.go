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
	if err := openai.Decode(r.Body, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if _, err := s.modelName(req.Model); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var ids []int32
	switch {
	case req.Prompt != nil && len(req.Messages) > 0:
		s.writeErr(w, r, apierr.New("messages", "give either prompt or messages, not both"))
		return
	case req.Prompt != nil:
		addSpecial := req.AddSpecialTokens == nil || *req.AddSpecialTokens
		ids = s.tok.Encode(*req.Prompt, addSpecial)
	case len(req.Messages) > 0:
		gen := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
		text, err := s.renderChat(req.Messages, gen, false, nil)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		ids = s.tok.Encode(text, req.AddSpecialTokens != nil && *req.AddSpecialTokens)
	default:
		s.writeErr(w, r, apierr.New("prompt", "prompt or messages is required"))
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
