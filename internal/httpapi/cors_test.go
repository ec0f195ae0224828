package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestCORS sends real preflight and simple requests through the server.
// The cases and their expected headers are Starlette's own CORS tests
// (tests/middleware/test_cors.py: allow_all, allow_all_except_credentials,
// allow_specific_origin, disallowed_preflight), whose middleware vLLM
// serves with its --allowed-origins, --allowed-methods, --allowed-headers
// and --allow-credentials; the default is vLLM's (all three "*", no
// credentials).
func TestCORS(t *testing.T) {
	specific := &CORS{AllowedOrigins: []string{"https://example.org"}, AllowedMethods: []string{"GET"}, AllowedHeaders: []string{"X-Example", "Content-Type"}}
	allowAll := &CORS{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"*"}, AllowedHeaders: []string{"*"}, AllowCredentials: true}
	tests := []struct {
		name        string
		cors        *CORS
		method, url string
		hdr         []string
		status      int
		body        string            // "" = not checked
		want        map[string]string // header → value; "" = absent
	}{
		{"default preflight", nil, "OPTIONS", "/v1/completions",
			[]string{"Origin", "https://example.org", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "X-Example"}, 200, "OK",
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "X-Example", "Access-Control-Allow-Credentials": "", "Vary": "",
				"Access-Control-Allow-Methods": "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT", "Access-Control-Max-Age": "600"}},
		{"default simple", nil, "GET", "/v1/models", []string{"Origin", "https://example.org"}, 200, "",
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "", "Vary": ""}},
		{"no origin, no CORS", nil, "GET", "/v1/models", nil, 200, "", map[string]string{"Access-Control-Allow-Origin": ""}},
		{"allow all with credentials: preflight", allowAll, "OPTIONS", "/v1/chat/completions",
			[]string{"Origin", "https://example.org", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "X-Example"}, 200, "OK",
			map[string]string{"Access-Control-Allow-Origin": "https://example.org", "Access-Control-Allow-Headers": "X-Example", "Access-Control-Allow-Credentials": "true", "Vary": "Origin"}},
		{"allow all with credentials: simple", allowAll, "GET", "/v1/models", []string{"Origin", "https://example.org"}, 200, "",
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true"}},
		{"allow all with credentials: cookie", allowAll, "GET", "/v1/models", []string{"Origin", "https://example.org", "Cookie", "star_cookie=sugar"}, 200, "",
			map[string]string{"Access-Control-Allow-Origin": "https://example.org", "Access-Control-Allow-Credentials": "true", "Vary": "Origin"}},
		{"specific origin: preflight", specific, "OPTIONS", "/v1/models",
			[]string{"Origin", "https://example.org", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "X-Example, Content-Type"}, 200, "OK",
			map[string]string{"Access-Control-Allow-Origin": "https://example.org", "Access-Control-Allow-Credentials": "", "Access-Control-Allow-Methods": "GET",
				"Access-Control-Allow-Headers": "Accept, Accept-Language, Content-Language, Content-Type, X-Example"}},
		{"specific origin: simple", specific, "GET", "/v1/models", []string{"Origin", "https://example.org"}, 200, "",
			map[string]string{"Access-Control-Allow-Origin": "https://example.org", "Access-Control-Allow-Credentials": "", "Vary": "Origin"}},
		{"specific origin: other origin's simple request", specific, "GET", "/v1/models", []string{"Origin", "https://another.org"}, 200, "",
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"disallowed preflight", specific, "OPTIONS", "/v1/completions",
			[]string{"Origin", "https://another.org", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "X-Nope"}, 400, "Disallowed CORS origin, method, headers",
			map[string]string{"Access-Control-Allow-Origin": ""}},
		{"disallowed headers", specific, "OPTIONS", "/v1/completions",
			[]string{"Origin", "https://example.org", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "X-Nope-1, X-Nope-2"}, 400, "Disallowed CORS headers", nil},
		{"OPTIONS without a requested method is no preflight", nil, "OPTIONS", "/v1/models", []string{"Origin", "https://example.org"}, 405, "",
			map[string]string{"Access-Control-Allow-Origin": "*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, newFake(), func(c *Config) { c.CORS = tt.cors })
			r := do(t, srv, tt.method, tt.url, "", tt.hdr...)
			if r.status != tt.status || tt.body != "" && string(r.body) != tt.body {
				t.Fatalf("%d %q", r.status, r.body)
			}
			for k, v := range tt.want {
				if got := strings.Join(r.header.Values(k), ", "); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestCORSPreflightWithoutKey: a browser's preflight carries no API key;
// it is answered (vLLM lets OPTIONS through its authentication), while the
// request itself still needs the key, and its 401 carries the CORS headers
// so the page can read it.
func TestCORSPreflightWithoutKey(t *testing.T) {
	srv := newTestServer(t, newFake(), func(c *Config) { c.APIKey = "k" })
	pre := do(t, srv, "OPTIONS", "/v1/completions", "", "Origin", "https://a.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization,content-type")
	if pre.status != http.StatusOK || pre.header.Get("Access-Control-Allow-Headers") != "authorization,content-type" {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
	r := do(t, srv, "POST", "/v1/completions", `{"prompt":"a"}`, "Origin", "https://a.example")
	if r.status != http.StatusUnauthorized || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("no key: %d %v", r.status, r.header)
	}
}
