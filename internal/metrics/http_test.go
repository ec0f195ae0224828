package metrics

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func serve(h http.Handler, method, path string) (code int, panicked bool) {
	rec := httptest.NewRecorder()
	func() {
		defer func() { panicked = recover() != nil }()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	}()
	return rec.Code, panicked
}

func TestHTTPMiddleware(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		status  string
		panics  bool
	}{
		{"body only", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, "2xx", false},
		{"nothing written", func(w http.ResponseWriter, r *http.Request) {}, "2xx", false},
		{"created", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }, "2xx", false},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/x", http.StatusFound) }, "3xx", false},
		{"not found", http.NotFound, "4xx", false},
		{"bad request after a second WriteHeader", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			w.WriteHeader(http.StatusOK) // superfluous, ignored by net/http
		}, "4xx", false},
		{"error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusServiceUnavailable) }, "5xx", false},
		{"early hints then ok", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusAccepted)
		}, "2xx", false},
		{"flush before any write", func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() }, "2xx", false},
		{"panic before writing", func(w http.ResponseWriter, r *http.Request) { panic("boom") }, "5xx", true},
		{"panic after writing", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
			panic(http.ErrAbortHandler)
		}, "4xx", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			h, err := NewHTTP(reg)
			if err != nil {
				t.Fatal(err)
			}
			mw := h.Middleware("/v1/completions", tt.handler)
			for _, method := range []string{http.MethodPost, http.MethodPost, http.MethodGet} {
				if _, panicked := serve(mw, method, "/v1/completions"); panicked != tt.panics {
					t.Fatalf("panicked = %v, want %v (the middleware must not swallow panics)", panicked, tt.panics)
				}
			}
			got := flatten(t, scrape(t, reg))
			want := map[string]float64{
				`http_requests_total{handler="/v1/completions",method="POST",status="` + tt.status + `"}`: 2,
				`http_requests_total{handler="/v1/completions",method="GET",status="` + tt.status + `"}`:  1,
				`http_request_duration_seconds_count{handler="/v1/completions",method="POST"}`:            2,
				`http_request_duration_seconds_count{handler="/v1/completions",method="GET"}`:             1,
				`http_request_duration_seconds_bucket{handler="/v1/completions",le="+Inf",method="POST"}`: 2,
				`http_request_duration_seconds_bucket{handler="/v1/completions",le="+Inf",method="GET"}`:  1,
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %g, want %g", k, got[k], v)
				}
			}
			var requests float64
			for k, v := range got {
				if strings.HasPrefix(k, "http_requests_total") {
					requests += v
				}
			}
			if requests != 3 {
				t.Errorf("http_requests_total sums to %g over all series, want 3", requests)
			}
		})
	}
}

func TestHTTPCatalog(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, err := NewHTTP(reg)
	if err != nil {
		t.Fatal(err)
	}
	serve(h.Middleware("/v1/models", http.NotFoundHandler()), http.MethodGet, "/v1/models")
	mfs := scrape(t, reg)
	tests := []struct {
		name, help string
		buckets    []float64
	}{
		{"http_requests_total", "Total number of requests by method, status and handler.", nil},
		{"http_request_duration_seconds", "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important. ", []float64{0.1, 0.5, 1}},
	}
	if len(mfs) != len(tests) {
		t.Errorf("%d families, want %d", len(mfs), len(tests))
	}
	for _, tt := range tests {
		mf := mfs[tt.name]
		if mf == nil {
			t.Fatalf("%s missing", tt.name)
		}
		if mf.GetHelp() != tt.help {
			t.Errorf("%s HELP %q, want %q", tt.name, mf.GetHelp(), tt.help)
		}
		if tt.buckets != nil {
			var got []float64
			for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
				got = append(got, b.GetUpperBound())
			}
			if len(got) != 4 || got[0] != 0.1 || got[1] != 0.5 || got[2] != 1 {
				t.Errorf("%s buckets %v, want 0.1 0.5 1 +Inf", tt.name, got)
			}
		}
	}
	if _, err := NewHTTP(reg); err == nil {
		t.Errorf("NewHTTP twice on one registry: want an error")
	}
	if _, err := NewHTTP(nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("NewHTTP(nil) = %v, want ErrInvalidOptions", err)
	}
}

func TestHTTPExcludedHandlers(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, err := NewHTTP(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/metrics", "/health", "/load", "/ping", "/version", "/server_info"} {
		served := false
		mw := h.Middleware(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served = true
			if _, ok := w.(*statusWriter); ok {
				t.Errorf("%s: the writer is wrapped", path)
			}
		}))
		serve(mw, http.MethodGet, path)
		if !served {
			t.Errorf("%s: handler not called", path)
		}
	}
	if mfs := scrape(t, reg); len(mfs) != 0 {
		t.Errorf("excluded handlers produced families: %v", mfs)
	}
}

// TestHTTPMiddlewareStreaming serves an SSE-like stream through a real
// server: Flush must reach the client before the handler returns, the
// ResponseController must reach the connection (Unwrap), and the request is
// counted when the stream ends.
func TestHTTPMiddlewareStreaming(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, err := NewHTTP(reg)
	if err != nil {
		t.Fatal(err)
	}
	firstRead := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: 1\n\n")
		f, ok := w.(http.Flusher)
		if !ok {
			t.Error("wrapped writer is not an http.Flusher")
			return
		}
		f.Flush()
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Time{}); err != nil {
			t.Errorf("ResponseController.SetWriteDeadline through the wrapper: %v", err)
		}
		select {
		case <-firstRead: // the client saw the first event: Flush worked
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: [DONE]\n\n")
		if err := rc.Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
	})
	srv := httptest.NewServer(h.Middleware("/v1/chat/completions", handler))
	defer srv.Close()

	// The deadline only turns a broken Flush into a failure instead of a hang.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: 1\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(firstRead)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: [DONE]\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	srv.Client().CloseIdleConnections()

	got := flatten(t, scrape(t, reg))
	if v := got[`http_requests_total{handler="/v1/chat/completions",method="POST",status="2xx"}`]; v != 1 {
		t.Errorf("http_requests_total = %g, want 1; series %v", v, got)
	}
	if v := got[`http_request_duration_seconds_count{handler="/v1/chat/completions",method="POST"}`]; v != 1 {
		t.Errorf("duration count = %g, want 1", v)
	}
}

func TestStatusClass(t *testing.T) {
	for code, want := range map[int]string{100: "1xx", 101: "1xx", 200: "2xx", 204: "2xx", 299: "2xx", 301: "3xx", 404: "4xx", 429: "4xx", 500: "5xx", 599: "5xx", 600: "6xx"} {
		if got := statusClass(code); got != want {
			t.Errorf("statusClass(%d) = %q, want %q", code, got, want)
		}
	}
}

// TestHandlerEncodings: /metrics is gzipped for a scraper that accepts it
// (Prometheus) and plain text otherwise; both decode to the same catalog.
func TestHandlerEncodings(t *testing.T) {
	reg := NewRegistry()
	newTestPrometheus(t, reg)
	h := Handler(reg)
	for _, tc := range []struct {
		name, accept, wantEncoding string
	}{
		{"plain", "", ""},
		{"gzip", "gzip", "gzip"},
		{"gzip among others", "br;q=1.0, gzip;q=0.8, *;q=0.1", "gzip"},
		{"identity only", "identity", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			if got := rec.Header().Get("Content-Encoding"); got != tc.wantEncoding {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.wantEncoding)
			}
			body := io.Reader(rec.Body)
			if tc.wantEncoding == "gzip" {
				zr, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			b, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type %q", ct)
			}
			for _, want := range []string{"# TYPE vllm:num_requests_running gauge", "vllm:generation_tokens_total{", "process_cpu_seconds_total", "go_goroutines"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("the body lacks %q", want)
				}
			}
		})
	}
}
