package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"govllm/internal/openai"
)

// sseWriter writes Server-Sent Events: "data: <json>\n\n" per chunk and
// "data: [DONE]\n\n" at the end. write buffers an event; flush sends
// what is buffered, so a step's chunks for one request (n > 1 choices, the
// usage chunk) cost one write system call. The event is encoded into a
// buffer the writer reuses.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
	enc *json.Encoder // encodes into buf
}

func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.rc.Flush()
	return s
}

// write buffers one event; an error means the client is gone.
func (s *sseWriter) write(v any) error { return s.writeEvent("", v) }

// writeEvent buffers one event, after an "event: name" line unless name is
// "" (the Responses API's typed events).
func (s *sseWriter) writeEvent(name string, v any) error {
	s.buf.Reset()
	if name != "" {
		s.buf.WriteString("event: ")
		s.buf.WriteString(name)
		s.buf.WriteByte('\n')
	}
	s.buf.WriteString("data: ")
	if err := s.enc.Encode(v); err != nil { // appends '\n'
		return err
	}
	s.buf.WriteByte('\n')
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// flush sends the buffered events.
func (s *sseWriter) flush() error { return s.rc.Flush() }

// send writes one event and flushes it.
func (s *sseWriter) send(v any) error {
	if err := s.write(v); err != nil {
		return err
	}
	return s.flush()
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
