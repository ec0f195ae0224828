package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// auth requires "Authorization: Bearer <APIKey>" when an API key is set.
// The comparison is constant-time over SHA-256 digests, so neither the key's
// content nor its length leaks through timing.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.cfg.APIKey == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.cfg.APIKey))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(h, "Bearer ")
		got := sha256.Sum256([]byte(strings.TrimSpace(token)))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="govllm"`)
			writeError(w, http.StatusUnauthorized, "", "invalid or missing API key (send Authorization: Bearer <key>)")
			return
		}
		next.ServeHTTP(w, r)
	})
}
