package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// openMetricsAccept is the Accept header of a scraper that negotiates
// OpenMetrics (Prometheus sends it first by default).
const openMetricsAccept = "application/openmetrics-text; version=1.0.0"

// exemplarFamilies are the histograms whose samples carry the request id.
var exemplarFamilies = []string{
	"vllm:time_to_first_token_seconds",
	"vllm:inter_token_latency_seconds",
	"vllm:e2e_request_latency_seconds",
}

// exemplarLine matches an OpenMetrics bucket line with an exemplar and
// captures the family and the request id.
var exemplarLine = regexp.MustCompile(`(?m)^(\S+)_bucket\{[^}]*\} \d+ # \{request_id="([^"]*)"\} \S+ \S+$`)

// postWithID posts body to url with X-Request-Id id and checks the id is
// echoed.
func postWithID(t *testing.T, url, id, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") != id {
		t.Fatalf("%s: %d, X-Request-Id %q: %s", body, resp.StatusCode, resp.Header.Get("X-Request-Id"), b)
	}
}

// getMetrics scrapes url/metrics with the given Accept header.
func getMetrics(t *testing.T, url, accept string) (contentType, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return resp.Header.Get("Content-Type"), string(b)
}

// exemplarIDs maps each family of an OpenMetrics exposition to the request
// ids of its exemplars.
func exemplarIDs(body string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, m := range exemplarLine.FindAllStringSubmatch(body, -1) {
		if out[m[1]] == nil {
			out[m[1]] = map[string]bool{}
		}
		out[m[1]][m[2]] = true
	}
	return out
}

// TestExemplarsOverHTTP: requests carrying X-Request-Id, one at a time;
// after each, an OpenMetrics scrape shows the engine request id (the
// endpoint prefix + the client's id, the id the request log line names) as
// an exemplar in each of the three histograms, since the latest
// observation of each belongs to that request. A parallel-sampling request
// is named by its parent id, never a child's. The classic text scrape
// carries no exemplar.
func TestExemplarsOverHTTP(t *testing.T) {
	noLeaks(t)
	url, _ := startServe(t, testServeConfig())
	long := strings.Repeat("L", 200)
	tests := []struct {
		name, path, id, body string
		want                 string
	}{
		{"completion", "/v1/completions", "exm-completion", `{"prompt":"once upon a time","max_tokens":4,"ignore_eos":true}`, "cmpl-exm-completion"},
		{"chat stream", "/v1/chat/completions", "exm-chat", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true,"stream":true}`, "chatcmpl-exm-chat"},
		{"two choices: the parent id", "/v1/completions", "exm-parent", `{"prompt":"once upon a time","max_tokens":4,"n":2,"temperature":1,"ignore_eos":true}`, "cmpl-exm-parent"},
		// 5 + 200 runes: cut to OpenMetrics' 128 less "request_id" (10).
		{"long id cut to 118 runes", "/v1/completions", long, `{"prompt":"once upon a time","max_tokens":4,"ignore_eos":true}`, ("cmpl-" + long)[:118]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			postWithID(t, url+tt.path, tt.id, tt.body)
			ct, om := getMetrics(t, url, openMetricsAccept)
			if !strings.HasPrefix(ct, "application/openmetrics-text") {
				t.Fatalf("Content-Type %q, want OpenMetrics", ct)
			}
			ids := exemplarIDs(om)
			for _, fam := range exemplarFamilies {
				if !ids[fam][tt.want] {
					t.Errorf("%s: no exemplar request_id=%q; have %v", fam, tt.want, ids[fam])
				}
				for id := range ids[fam] {
					if strings.HasPrefix(id, tt.want+"-") || len(id) > 118 {
						t.Errorf("%s: exemplar %q (a child's id, or over 118 runes)", fam, id)
					}
				}
			}
		})
	}
	ct, text := getMetrics(t, url, "")
	if !strings.HasPrefix(ct, "text/plain") || strings.Contains(text, "request_id") || strings.Contains(text, " # {") {
		t.Errorf("classic scrape (%s) carries exemplars", ct)
	}
}
