package httpapi

import (
	"net/http"
	"runtime/debug"
)

// recoverPanics turns a handler panic into a logged 500 envelope (if nothing
// was written yet) instead of a dropped connection. http.ErrAbortHandler is
// re-raised: net/http uses it to abort a response on purpose.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !tw.wrote {
				writeError(tw, http.StatusInternalServerError, "", "internal server error")
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// limitBody caps request bodies; reading past the limit fails with
// *http.MaxBytesError (413).
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// trackingWriter remembers whether the header went out. It keeps Flush
// (SSE) and Unwrap (http.ResponseController) working.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *trackingWriter) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *trackingWriter) Flush() {
	w.wrote = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
