package httpapi

import (
	"net/http"

	"govllm/internal/openai"
)

// models lists the served model names (GET /v1/models).
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	created := s.cfg.Now().Unix()
	list := openai.ModelList{Object: "list", Data: make([]openai.Model, 0, len(s.cfg.ServedModelNames))}
	for _, name := range s.cfg.ServedModelNames {
		list.Data = append(list.Data, openai.Model{
			ID: name, Object: "model", Created: created, OwnedBy: "govllm",
			Root: s.cfg.ServedModelNames[0], MaxModelLen: s.eng.MaxModelLen(),
		})
	}
	writeJSON(w, http.StatusOK, list)
}
