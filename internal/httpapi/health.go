package httpapi

import (
	"errors"
	"net/http"

	"govllm/internal/llm"
	"govllm/internal/openai"
)

// health answers 200 with an empty body while the engine runs, 503 once it
// has died or was closed (vLLM /health).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	switch err := s.eng.Err(); {
	case errors.Is(err, llm.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "", "the engine is shut down")
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "", "engine is dead: "+err.Error())
		return
	}
	w.WriteHeader(http.StatusOK)
}

// ping is vLLM's /ping (SageMaker): the same as /health.
func (s *Server) ping(w http.ResponseWriter, r *http.Request) { s.health(w, r) }

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	v := s.cfg.Version
	if v == "" {
		v = "dev"
	}
	writeJSON(w, http.StatusOK, openai.VersionResponse{Version: v})
}
