package httpapi

import (
	"net/http"
	"time"

	"govllm/internal/openai"
	"govllm/internal/output"
	"govllm/internal/pooling"
)

// embeddings serves POST /v1/embeddings: each input is its own embedding
// request (prefill only, pooled by the server's --pooler-config), batched
// by the engine with everything else; data[i] is input i's vector.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var er *openai.EmbeddingRequest
	prepare := func(req *openai.EmbeddingRequest, r *http.Request, arrival time.Time) (*genRequest, error) {
		er = req
		return s.prepareEmbedding(req, r, arrival)
	}
	respond := func(g *genRequest, outs []*output.RequestOutput) any { return s.embeddingResponse(g, er, outs) }
	serveGenerate(s, w, r, prepare, nil, respond)
}

func (s *Server) prepareEmbedding(req *openai.EmbeddingRequest, r *http.Request, arrival time.Time) (*genRequest, error) {
	model, err := s.modelName(req.Model)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	p := s.cfg.pooler()
	if req.Normalize != nil {
		p.Normalize = *req.Normalize
	}
	base := baseID(r, req.RequestID)
	g := &genRequest{id: "embd-" + base, base: base, model: model, arrival: arrival, priority: req.Priority,
		truncate: s.embeddingTruncation(req.TruncatePromptTokens), user: req.User, pooling: &p, prompts: make([]genPrompt, len(req.Input))}
	for i, in := range req.Input {
		if in.IsTokens {
			g.prompts[i].ids = in.TokenIDs // checked against the vocabulary by llm.Preparer
			continue
		}
		g.prompts[i].ids = s.tok.Encode(in.Text, req.SpecialTokens())
	}
	return g, nil
}

// embeddingTruncation maps vLLM's truncate_prompt_tokens -1 (the model's
// context) to the longest input an embedding can have here.
func (s *Server) embeddingTruncation(k *int) *int {
	if k == nil || *k != -1 {
		return k
	}
	n := s.eng.MaxModelLen() - 1
	return &n
}

// embeddingResponse lists each input's vector by index; usage counts the
// inputs' tokens (total = prompt: nothing is generated).
func (s *Server) embeddingResponse(g *genRequest, req *openai.EmbeddingRequest, outs []*output.RequestOutput) any {
	resp := openai.EmbeddingResponse{ID: g.id, Object: "list", Created: s.cfg.Now().Unix(), Model: g.model,
		Data: make([]openai.EmbeddingData, len(outs))}
	for i, o := range outs {
		resp.Data[i] = openai.EmbeddingData{Index: i, Object: "embedding", Embedding: req.EncodeEmbedding(o.Outputs[0].Pooled)}
	}
	resp.Usage = openai.NewUsage(g.promptTokens(), 0, 0)
	resp.Timings = s.timings(g, outs)
	return resp
}

// pooler is the pooling of embedding requests: Config.Pooler, else
// vLLM's default for a decoder model (LAST, normalized).
func (c *Config) pooler() pooling.Params {
	if c.Pooler == nil {
		return pooling.Default()
	}
	return *c.Pooler
}
