package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// auth requires "Authorization: Bearer <APIKey>" (scheme case-insensitive)
// when an API key is set.
// The comparison is constant-time over SHA-256 digests, so neither the key's
// content nor its length leaks through timing.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.cfg.APIKey == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.cfg.APIKey))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		ok := len(h) > len("Bearer ") && strings.EqualFold(h[:len("Bearer ")], "Bearer ")
		token := ""
		if ok {
			token = strings.TrimSpace(h[len("Bearer "):])
		}
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="govllm"`)
			writeError(w, http.StatusUnauthorized, "", "invalid or missing API key (send Authorization: Bearer <key>)")
			return
		}
		next.ServeHTTP(w, r)
	})
}
