package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// auth requires "Authorization: Bearer <key>" with APIKey or one of
// APIKeys (scheme case-insensitive)
// on every path that starts with /v1, as vLLM does, before mux routes it:
// an unknown /v1 path or a wrong method answers 401 like a real route, so
// routes cannot be mapped without the key. A refusal is counted in the HTTP
// metrics under the handler mux would have chosen (one of labels, else
// "none"). The comparison is constant-time over SHA-256 digests, so neither
// the key's content nor its length leaks through timing.
func (s *Server) auth(mux *http.ServeMux, labels []string) http.Handler {
	var wants [][sha256.Size]byte
	for _, k := range append([]string{s.cfg.APIKey}, s.cfg.APIKeys...) {
		if k != "" {
			wants = append(wants, sha256.Sum256([]byte(k)))
		}
	}
	if len(wants) == 0 {
		return mux
	}
	deny := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="govllm"`)
		writeError(w, http.StatusUnauthorized, "", "invalid or missing API key (send Authorization: Bearer <key>)")
	})
	denied := make(map[string]http.Handler, len(labels))
	for _, l := range labels {
		denied[l] = s.instrument(l, deny)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1") {
			mux.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get("Authorization")
		ok := len(h) > len("Bearer ") && strings.EqualFold(h[:len("Bearer ")], "Bearer ")
		token := ""
		if ok {
			token = strings.TrimSpace(h[len("Bearer "):])
		}
		got := sha256.Sum256([]byte(token))
		match := 0
		for _, want := range wants { // every key is compared: the time does not tell which matched
			match |= subtle.ConstantTimeCompare(got[:], want[:])
		}
		if ok && match == 1 {
			mux.ServeHTTP(w, r)
			return
		}
		_, pattern := mux.Handler(r)
		label := pattern[strings.IndexByte(pattern, ' ')+1:] // "POST /v1/models" → "/v1/models"
		d, known := denied[label]
		if !known {
			d = denied["none"]
		}
		d.ServeHTTP(w, r)
	})
}
