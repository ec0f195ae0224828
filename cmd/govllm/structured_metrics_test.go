package main

import (
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The structured-output families (docs/metrics.md, govllm extensions).
const (
	compileFamily = "govllm:structured_output_compile_seconds"
	maskFamily    = "govllm:structured_output_mask_seconds"
)

// logMasks matches the structured-output part of the periodic log line.
var logMasks = regexp.MustCompile(`Structured outputs: (\d+) masks \(avg [0-9.]+ µs\), (\d+) compiles \(avg [0-9.]+ ms\)`)

// TestStructuredOutputMetrics: over real HTTP, a fresh server exposes the
// compile and mask histograms at 0; after one json_schema request and one
// unconstrained one, /metrics shows one compile and exactly one mask per
// token the constrained request generated (every sampled token was
// masked; the unconstrained request's none), and the periodic log lines
// count the same masks and compile.
func TestStructuredOutputMetrics(t *testing.T) {
	noLeaks(t)
	var logBuf syncBuffer
	cfg := testServeConfig()
	cfg.MaxModelLen = 512
	cfg.LogStatsInterval = 50 * time.Millisecond
	url, stop := startServeLog(t, cfg, slog.New(slog.NewTextHandler(&logBuf, nil)))
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	sc := &scraper{url: url, hc: http.DefaultClient}
	fresh := sc.scrape(t)
	for _, name := range []string{compileFamily, maskFamily} {
		if n, _ := fresh.hist(name); len(fresh.series(name)) != 1 || n != 0 {
			t.Fatalf("fresh server: %s has %d series, count %g; want one at 0", name, len(fresh.series(name)), n)
		}
	}
	if r := post(t, url, "/v1/completions", `{"prompt":"Once","max_tokens":7,"ignore_eos":true}`); r.status != 200 {
		t.Fatalf("unconstrained: %d %s", r.status, r.body)
	}
	body := `{"messages":[{"role":"user","content":"Who?"}],"max_tokens":400,"temperature":1,"seed":1,"response_format":{"type":"json_schema","json_schema":{"name":"person","schema":` + personSchema + `}}}`
	if r := post(t, url, "/v1/chat/completions", body); r.status != 200 {
		t.Fatalf("structured: %d %s", r.status, r.body)
	}
	last := sc.await(t, "structured-output histograms", 10*time.Second, func(s *scrape) []check {
		compiles, _ := s.hist(compileFamily)
		masks, _ := s.hist(maskFamily)
		gen := s.sum("vllm:generation_tokens_total")
		return []check{eq("compile observations", compiles, 1), gt("generation tokens", gen, 7), eq("mask observations", masks, gen-7)}
	})
	masks, _ := last.hist(maskFamily)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var logged, compiles int
		for _, m := range logMasks.FindAllStringSubmatch(logBuf.String(), -1) {
			n, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			logged, compiles = logged+n, compiles+c
		}
		if float64(logged) == masks && compiles == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log lines count %d masks and %d compiles, want %g and 1:\n%s", logged, compiles, masks, logBuf.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
}
