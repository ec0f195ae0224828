package httpapi

import (
	"net/http"
	"slices"

	"govllm/internal/openai"
)

// models lists the served model names (GET /v1/models).
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	created := s.cfg.Now().Unix()
	list := openai.ModelList{Object: "list", Data: make([]openai.Model, 0, len(s.cfg.ServedModelNames))}
	for _, name := range s.cfg.ServedModelNames {
		list.Data = append(list.Data, s.modelCard(name, created))
	}
	writeJSON(w, http.StatusOK, list)
}

// model answers GET /v1/models/{id} (OpenAI's "retrieve model"): the same
// card as in the list for a served name (--served-model-name aliases
// included; a name may hold slashes, "org/model"), else 404 naming
// "model". vLLM has no such route; this is OpenAI's.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id") // "" for /v1/models/
	if id == "" || !slices.Contains(s.cfg.ServedModelNames, id) {
		s.writeErr(w, r, s.unknownModel(id))
		return
	}
	writeJSON(w, http.StatusOK, s.modelCard(id, s.cfg.Now().Unix()))
}

// modelCard is one served name's entry.
func (s *Server) modelCard(name string, created int64) openai.Model {
	return openai.Model{
		ID: name, Object: "model", Created: created, OwnedBy: "govllm",
		Root: s.cfg.ServedModelNames[0], MaxModelLen: s.eng.MaxModelLen(),
	}
}
