package httpapi

import (
	"errors"
	"net/http"

	"govllm/internal/llm"
	"govllm/internal/openai"
)

// health is the readiness answer (vLLM /health): 200 with an empty body
// while the engine runs and the server admits requests; 503 once the
// engine has died or was closed, and while the server drains (Drain).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.engineDown(w) {
		return
	}
	if s.drain.isDraining() {
		writeError(w, http.StatusServiceUnavailable, "", "the server is draining")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// ping is the liveness answer (vLLM's /ping): as /health, except that it
// stays 200 while the server drains, so a liveness probe does not restart
// a process that is finishing its requests.
func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	if !s.engineDown(w) {
		w.WriteHeader(http.StatusOK)
	}
}

// engineDown answers 503 and reports true when the engine has died or was
// closed.
func (s *Server) engineDown(w http.ResponseWriter) bool {
	switch err := s.eng.Err(); {
	case errors.Is(err, llm.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "", "the engine is shut down")
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "", "engine is dead: "+err.Error())
	default:
		return false
	}
	return true
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	v := s.cfg.Version
	if v == "" {
		v = "dev"
	}
	writeJSON(w, http.StatusOK, openai.VersionResponse{Version: v})
}
