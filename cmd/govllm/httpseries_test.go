package main

import (
	"net/http"
	"testing"
	"time"
)

// TestHTTPSeriesPrecreated: before the first request, /metrics holds
// http_requests_total at 0 for every route's method × status class (2xx,
// 4xx, 5xx) and its http_request_duration_seconds, also for unmatched
// paths ("none"); excluded handlers (/health, /metrics, …) have none. A
// first 404 then moves the pre-created series, not a new one.
func TestHTTPSeriesPrecreated(t *testing.T) {
	noLeaks(t)
	url, _ := startServe(t, testServeConfig())
	sc := &scraper{url: url, hc: http.DefaultClient}
	s := sc.scrape(t)
	routes := [][2]string{
		{"POST", "/v1/completions"}, {"POST", "/v1/chat/completions"}, {"GET", "/v1/models"},
		{"POST", "/tokenize"}, {"POST", "/detokenize"}, {"GET", "none"}, {"POST", "none"},
	}
	for _, r := range routes {
		for _, class := range []string{"2xx", "4xx", "5xx"} {
			ms := s.series("http_requests_total", "method", r[0], "handler", r[1], "status", class)
			if len(ms) != 1 || scalar(ms[0]) != 0 {
				t.Errorf("http_requests_total{method=%q,handler=%q,status=%q}: %d series before any request, want one at 0", r[0], r[1], class, len(ms))
			}
		}
		if n, _ := s.hist("http_request_duration_seconds", "method", r[0], "handler", r[1]); len(s.series("http_request_duration_seconds", "method", r[0], "handler", r[1])) != 1 || n != 0 {
			t.Errorf("http_request_duration_seconds{method=%q,handler=%q} missing or not 0", r[0], r[1])
		}
	}
	for _, h := range []string{"/health", "/ping", "/metrics", "/version"} {
		if n := len(s.series("http_requests_total", "handler", h)); n != 0 {
			t.Errorf("excluded handler %s has %d http_requests_total series", h, n)
		}
	}
	before := len(s.series("http_requests_total"))
	resp, err := http.Get(url + "/no/such/path")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s = sc.await(t, "the 404 counted", 5*time.Second, func(s *scrape) []check {
		return []check{eq("none 4xx", s.sum("http_requests_total", "method", "GET", "handler", "none", "status", "4xx"), 1)}
	})
	if after := len(s.series("http_requests_total")); after != before {
		t.Errorf("a 404 created a series: %d before, %d after", before, after)
	}
}
