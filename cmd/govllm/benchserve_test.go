package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchServe runs `govllm bench serve --verify-metrics` against
// `govllm serve` (stories260K, in-process, real listener) on both
// endpoints: the run succeeds, prints vLLM's result table and the /metrics
// cross-check (every row ok), times scrapes of /metrics during the run
// (every one answered), saves a JSON result with vLLM's field names and
// the latency plot, and the server's own counters moved by exactly the
// benchmark's requests (the measured prompts plus the warm-up).
func TestBenchServe(t *testing.T) {
	noLeaks(t)
	g := newGate(t, gateConfig(t))
	const prompts, inLen, outLen, warmups = 8, 16, 8, 1
	for _, endpoint := range []string{completion, chatPath} {
		t.Run(endpoint, func(t *testing.T) {
			before := g.sc.scrape(t)
			dir := t.TempDir()
			svg := filepath.Join(dir, "latency.svg")
			var stdout, stderr bytes.Buffer
			err := runBench(context.Background(), []string{"serve", "--base-url", g.url, "--endpoint", endpoint,
				"--num-prompts", "8", "--random-input-len", "16", "--random-output-len", "8", "--max-concurrency", "4",
				"--ignore-eos", "--verify-metrics", "--save-result", "--result-dir", dir, "--result-filename", "result.json",
				"--plot", svg, "--metrics-scrape-interval", "1ms", "--backend", "vllm", "--num-warmups", "1", "--save-detailed",
				"--metric-percentiles", "50,90,99", "--percentile-metrics", "ttft,tpot,itl,e2el"}, &stdout, &stderr)
			if err != nil {
				t.Fatalf("bench serve: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
			}
			out := stdout.String()
			for _, want := range []string{"Serving Benchmark Result", "Successful requests:", "Total generated tokens:",
				"Mean TTFT (ms):", "P99 TTFT (ms):", "Mean TPOT (ms):", "Mean ITL (ms):", "Mean E2EL (ms):",
				"Server /metrics cross-check", "requests", "prompt tokens", "generation tokens", "mean TTFT (ms)", "mean E2E latency (ms)",
				"Server /metrics scrape latency", "P99 scrape latency (ms):"} {
				if !strings.Contains(out, want) {
					t.Errorf("the table lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "MISMATCH") {
				t.Errorf("cross-check mismatch:\n%s", out)
			}

			b, err := os.ReadFile(filepath.Join(dir, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res map[string]any
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			num := func(k string) float64 {
				v, ok := res[k].(float64)
				if !ok {
					t.Errorf("result JSON: %q is %T (%v), want a number", k, res[k], res[k])
				}
				return v
			}
			for k, want := range map[string]float64{"completed": prompts, "failed": 0, "num_prompts": prompts,
				"total_output_tokens": prompts * outLen, "max_concurrency": 4} {
				if v := num(k); v != want {
					t.Errorf("result %s = %v, want %v", k, v, want)
				}
			}
			// Scrapes taken during the run, every one answered.
			if lat, _ := res["metrics_scrape_latencies_ms"].([]any); len(lat) == 0 || res["metrics_scrape_errors"] != nil {
				t.Errorf("scrapes during the run: latencies %v, errors %v", res["metrics_scrape_latencies_ms"], res["metrics_scrape_errors"])
			}
			if endpoint == completion { // exact-length token prompts built with /tokenize
				if v := num("total_input_tokens"); v != prompts*inLen {
					t.Errorf("total_input_tokens = %v, want %d", v, prompts*inLen)
				}
			}
			for _, k := range []string{"total_input_tokens", "duration", "request_throughput", "output_throughput", "total_token_throughput",
				"mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
				"mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms"} {
				if v := num(k); !(v > 0) {
					t.Errorf("result %s = %v, want > 0", k, v)
				}
			}
			for _, k := range []string{"std_ttft_ms", "std_tpot_ms", "std_itl_ms", "std_e2el_ms", "p50_ttft_ms", "p90_ttft_ms",
				"max_output_tokens_per_s", "max_concurrent_requests", "burstiness"} {
				num(k)
			}
			for _, k := range []string{"date", "backend", "model_id", "endpoint", "request_rate", "input_lens", "output_lens",
				"ttfts", "itls", "start_times", "generated_texts", "errors"} {
				if _, ok := res[k]; !ok {
					t.Errorf("result JSON lacks %q", k)
				}
			}
			if res["model_id"] != gateModel || res["endpoint"] != endpoint || res["backend"] != "vllm" {
				t.Errorf("result model_id %v, endpoint %v", res["model_id"], res["endpoint"])
			}
			if l, _ := res["ttfts"].([]any); len(l) != prompts {
				t.Errorf("result ttfts has %d entries, want %d", len(l), prompts)
			}
			checks, _ := res["metrics_check"].([]any)
			if len(checks) != 5 {
				t.Errorf("result metrics_check has %d rows, want 5: %v", len(checks), res["metrics_check"])
			}
			for _, c := range checks {
				if row, _ := c.(map[string]any); row["ok"] != true {
					t.Errorf("cross-check row not ok: %v", c)
				}
			}

			plot, err := os.ReadFile(svg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(plot, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(plot), []byte("</svg>")) {
				t.Errorf("the plot is not an SVG document (%d bytes)", len(plot))
			}

			// The server saw exactly the benchmark's requests.
			const sent = prompts + warmups
			g.sc.await(t, "server counters after bench serve", settle, func(s *scrape) []check {
				d := delta{before, s}
				return append([]check{
					eq(`request_success_total{length}`, d.c("vllm:request_success_total", "finished_reason", "length"), sent),
					eq("request_success_total", d.c("vllm:request_success_total"), sent),
					eq("generation_tokens_total", d.c("vllm:generation_tokens_total"), sent*outLen),
					eq(`http_requests_total{handler="`+endpoint+`",status="2xx"}`, d.c("http_requests_total", "handler", endpoint, "status", "2xx"), sent),
					eq("e2e_request_latency_seconds_count", d.n("vllm:e2e_request_latency_seconds"), sent),
				}, idleChecks(s)...)
			})
		})
	}
}
