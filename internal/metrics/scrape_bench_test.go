package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkScrape serves GET /metrics from the registry `govllm serve`
// builds (Go and process collectors, every vllm:* family, the HTTP
// metrics) after some steps were recorded; gzip is what Prometheus asks
// for, plain what curl does.
func BenchmarkScrape(b *testing.B) {
	reg := NewRegistry()
	p := newTestPrometheus(b, reg)
	if _, err := NewHTTP(reg); err != nil {
		b.Fatal(err)
	}
	s, it := typicalStep()
	for range 100 {
		p.Record(s, it)
	}
	h := Handler(reg)
	for _, enc := range []string{"plain", "gzip"} {
		b.Run(enc, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if enc == "gzip" {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}
