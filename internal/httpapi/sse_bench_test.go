package httpapi

import (
	"net/http/httptest"
	"testing"

	"govllm/internal/openai"
)

// BenchmarkSSESend measures one streamed completion chunk (one token's
// text): JSON encoding, SSE framing and the flush, into a recorder, so
// the figure is the server's CPU per token per stream without the socket.
func BenchmarkSSESend(b *testing.B) {
	w := httptest.NewRecorder()
	sse := startSSE(w)
	ch := openai.CompletionResponse{ID: "cmpl-0123456789abcdef0123456789abcdef", Object: "text_completion", Created: 1700000000, Model: "govllm-dummy",
		Choices: []openai.CompletionChoice{{Index: 0, Text: " upon"}}}
	b.ReportAllocs()
	for b.Loop() {
		w.Body.Reset()
		if err := sse.send(ch); err != nil {
			b.Fatal(err)
		}
	}
}
