package httpapi

import (
	"net/http"
	"slices"
	"sync"
	"testing"
)

// TestUIRoutes: Config.UI answers GET / and GET /ui/... without the API
// key, under the handler labels "/" and "/ui/"; other paths and methods
// keep their answers, and without Config.UI / is a 404.
func TestUIRoutes(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page " + r.URL.Path)) })
	var mu sync.Mutex
	var labels []string
	srv := newTestServer(t, newFake(), func(c *Config) {
		c.UI = ui
		c.APIKey = "k"
		c.Instrument = func(h string, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				labels = append(labels, h)
				mu.Unlock()
				next.ServeHTTP(w, r)
			})
		}
	})
	for _, tc := range []struct {
		method, path string
		status       int
		body, label  string
	}{
		{"GET", "/", 200, "page /", "/"},
		{"HEAD", "/", 200, "", "/"},
		{"GET", "/ui/app.js", 200, "page /ui/app.js", "/ui/"},
		{"POST", "/", 404, "", "none"},
		{"GET", "/other", 404, "", "none"},
		{"GET", "/v1/models", 401, "", "/v1/models"}, // the key still guards /v1
	} {
		mu.Lock()
		labels = nil
		mu.Unlock()
		r := do(t, srv, tc.method, tc.path, "")
		if r.status != tc.status || (tc.body != "" && string(r.body) != tc.body) {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, r.status, r.body, tc.status, tc.body)
		}
		mu.Lock()
		if !slices.Equal(labels, []string{tc.label}) {
			t.Errorf("%s %s: handler labels %v, want [%s]", tc.method, tc.path, labels, tc.label)
		}
		mu.Unlock()
	}
	s, err := New(Config{ServedModelNames: []string{model}, UI: ui}, newFake())
	if err != nil {
		t.Fatal(err)
	}
	if rs := s.Routes(); !slices.Contains(rs, [2]string{"GET", "/"}) || !slices.Contains(rs, [2]string{"GET", "/ui/"}) {
		t.Errorf("Routes() = %v, want GET / and GET /ui/ among them", rs)
	}
	if r := do(t, newTestServer(t, newFake(), nil), "GET", "/", ""); r.status != 404 {
		t.Errorf("GET / without Config.UI = %d, want 404", r.status)
	}
}
