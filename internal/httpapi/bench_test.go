package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkServer measures the server's own cost per request (decode,
// tokenize, validate, encode; SSE framing when streaming) over a loopback
// connection, with the fake engine producing 16 tokens instantly.
func BenchmarkServer(b *testing.B) {
	cases := []struct{ name, path, body string }{
		{"completion", "/v1/completions", `{"prompt":"Once upon a time there was","max_tokens":16}`},
		{"completion-stream", "/v1/completions", `{"prompt":"Once upon a time there was","max_tokens":16,"stream":true}`},
		{"completion-4-prompts", "/v1/completions", `{"prompt":["Once upon a time","there was","a little","dog"],"max_tokens":16}`},
		{"completion-4-prompts-stream", "/v1/completions", `{"prompt":["Once upon a time","there was","a little","dog"],"max_tokens":16,"stream":true}`},
		{"chat", "/v1/chat/completions", `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Tell me a story"}],"max_tokens":16}`},
		{"chat-stream-logprobs", "/v1/chat/completions", `{"messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":16,"stream":true,"logprobs":true,"top_logprobs":5}`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			f := newFake()
			s, err := New(Config{ServedModelNames: []string{model}, DisableLogRequests: true}, f)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(s)
			defer func() { srv.Close(); f.wg.Wait() }()
			client := srv.Client()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
