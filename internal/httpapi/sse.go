package httpapi

import (
	"net/http"

	"govllm/internal/openai"
)

// sseWriter writes Server-Sent Events: one "data: <json>\n\n" per chunk,
// flushed at once, and "data: [DONE]\n\n" at the end.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	s.rc.Flush()
	return s
}

// send writes one event; an error means the client is gone.
func (s *sseWriter) send(v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(b)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, b...)
	buf = append(buf, '\n', '\n')
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// fail sends an error event (the envelope) in the stream.
func (s *sseWriter) fail(err error) {
	status, param := classify(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		msg = "internal server error"
	}
	s.send(openai.NewError(status, param, msg))
}

func (s *sseWriter) done() {
	s.w.Write([]byte("data: [DONE]\n\n"))
	s.rc.Flush()
}
