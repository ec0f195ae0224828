package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"govllm/internal/pooling"
)

// TestServeCORSFlags: vLLM's CORS flags, parsed from a command line, reach
// the server: a real preflight from an allowed origin is answered with it,
// one from another origin is refused (Starlette's 400 text), and a value
// that is not a JSON list is refused at start-up as vLLM's json.loads
// refuses it.
func TestServeCORSFlags(t *testing.T) {
	noLeaks(t)
	parsed, err := parseServeArgs([]string{"--allowed-origins", `["https://ui.example"]`, "--allowed-methods", `["POST"]`,
		"--allowed-headers", `["Authorization"]`, "--allow-credentials"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.CORS = parsed.CORS
	url, _ := startServe(t, cfg)
	tests := []struct {
		origin, method, headers string
		status                  int
		body, allowOrigin       string
	}{
		{"https://ui.example", "POST", "authorization", 200, "OK", "https://ui.example"},
		{"https://other.example", "POST", "", 400, "Disallowed CORS origin", ""},
		{"https://ui.example", "DELETE", "X-Custom", 400, "Disallowed CORS method, headers", "https://ui.example"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("OPTIONS", url+"/v1/embeddings", nil)
		req.Header.Set("Origin", tt.origin)
		req.Header.Set("Access-Control-Request-Method", tt.method)
		if tt.headers != "" {
			req.Header.Set("Access-Control-Request-Headers", tt.headers)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != tt.status || string(b) != tt.body || h.Get("Access-Control-Allow-Origin") != tt.allowOrigin ||
			h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Allow-Methods") != "POST" ||
			h.Get("Access-Control-Allow-Headers") != "Accept, Accept-Language, Authorization, Content-Language, Content-Type" {
			t.Errorf("%+v: %d %q %v", tt, resp.StatusCode, b, h)
		}
	}
	for _, bad := range []string{"*", `"*"`, `[1]`, `{"a":1}`} {
		if _, err := parseServeArgs([]string{"--allowed-origins", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "JSON list") {
			t.Errorf("--allowed-origins %s: %v", bad, err)
		}
	}
}

// TestCORSAndPoolerInConfigFile: in a --config YAML file the JSON values
// of --allowed-origins and --pooler-config are written as strings.
func TestCORSAndPoolerInConfigFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(f, []byte("allowed-origins: '[\"https://ui.example\"]'\npooler-config: '{\"pooling_type\": \"MEAN\"}'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := parseServeArgs([]string{"--config", f}, io.Discard)
	if err != nil || !slices.Equal(c.AllowedOrigins, []string{"https://ui.example"}) || c.Pooler != (pooling.Params{Type: pooling.Mean, Normalize: true}) {
		t.Fatalf("%v: origins %v, pooler %+v", err, c.AllowedOrigins, c.Pooler)
	}
}
