package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestPercentileLinearInterpolation(t *testing.T) {
	// numpy.percentile([1,2,3,4], p) with the default linear method.
	xs := []float64{1, 2, 3, 4}
	for _, tc := range []struct{ p, want float64 }{
		{0, 1}, {50, 2.5}, {90, 3.7}, {99, 3.97}, {100, 4}, {25, 1.75},
	} {
		if got := percentile(xs, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("percentile(%v, %g) = %g, want %g", xs, tc.p, got, tc.want)
		}
	}
	s := summarize([]float64{4, 1, 3, 2}, []float64{50, 99})
	if s.Mean != 2.5 || s.Median != 2.5 || math.Abs(s.Std-math.Sqrt(1.25)) > 1e-12 {
		t.Errorf("summarize = %+v", s)
	}
	if got := pLabel(99.9); got != "99.9" {
		t.Errorf("pLabel(99.9) = %q", got)
	}
}

func TestGammaIntervalsHaveTheRequestedRate(t *testing.T) {
	for _, burst := range []float64{0.5, 1, 4} {
		rng := rand.New(rand.NewPCG(1, 2))
		const n, rate = 20000, 8.0
		var sum float64
		for range n {
			sum += gammaInterval(rng, rate, burst).Seconds()
		}
		if mean := sum / n; math.Abs(mean-1/rate) > 0.05/rate {
			t.Errorf("burstiness %g: mean interval %.4fs, want %.4fs", burst, mean, 1/rate)
		}
	}
}

// fakeServer speaks just enough of the OpenAI streaming API and vLLM's
// /metrics; lie adds to the reported generation tokens.
type fakeServer struct {
	mu                      sync.Mutex
	requests, prompt, gen   int
	lie                     int
	sawIgnoreEOS, sawTokens bool

	// scraped, when set, holds each completion until /metrics was
	// requested once (then closed); failMetrics makes /metrics a 500.
	scraped     chan struct{}
	scrapeOnce  sync.Once
	failMetrics bool
	// failAfter > 0 makes /metrics a 500 after that many scrapes (a
	// replica that went away during the run).
	failAfter, scrapes int
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/completions" && f.scraped != nil {
		select {
		case <-f.scraped:
		case <-time.After(time.Minute):
			http.Error(w, "no /metrics scrape came during the request", http.StatusInternalServerError)
			return
		}
	}
	switch r.URL.Path {
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fake","object":"model"}]}`)
	case "/tokenize":
		var req struct{ Prompt string }
		json.NewDecoder(r.Body).Decode(&req)
		ids := make([]int, len(strings.Fields(req.Prompt))+1)
		b, _ := json.Marshal(map[string]any{"tokens": ids, "count": len(ids)})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	case "/v1/completions":
		var req struct {
			Prompt    []int `json:"prompt"`
			MaxTokens int   `json:"max_tokens"`
			IgnoreEOS bool  `json:"ignore_eos"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < req.MaxTokens; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\"t%d \"}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", len(req.Prompt), req.MaxTokens)
		f.mu.Lock()
		f.requests++
		f.prompt += len(req.Prompt)
		f.gen += req.MaxTokens
		f.sawIgnoreEOS = f.sawIgnoreEOS || req.IgnoreEOS
		f.sawTokens = f.sawTokens || len(req.Prompt) > 0
		f.mu.Unlock()
	case "/metrics":
		if f.scraped != nil {
			f.scrapeOnce.Do(func() { close(f.scraped) })
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.scrapes++
		if f.failMetrics || f.failAfter > 0 && f.scrapes > f.failAfter {
			http.Error(w, "metrics are broken", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "# TYPE vllm:request_success_total counter\nvllm:request_success_total{model_name=\"fake\",engine=\"0\",finished_reason=\"length\"} %d\n", f.requests)
		fmt.Fprintf(w, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"fake\",engine=\"0\"} %d\n", f.prompt)
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"fake\",engine=\"0\"} %d\n", f.gen+f.lie*f.requests)
		for _, h := range []string{"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"} {
			fmt.Fprintf(w, "# TYPE %s histogram\n%s_bucket{model_name=\"fake\",engine=\"0\",le=\"+Inf\"} %d\n%s_sum{model_name=\"fake\",engine=\"0\"} %g\n%s_count{model_name=\"fake\",engine=\"0\"} %d\n",
				h, h, f.requests, h, 0.0000001*float64(f.requests), h, f.requests)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestRunAgainstAFakeServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lie    int
		wantOK bool
	}{
		{"honest metrics", 0, true},
		{"metrics that undercount", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeServer{lie: tc.lie}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			res, err := Run(context.Background(), Config{
				BaseURL: srv.URL, Endpoint: "/v1/completions", NumPrompts: 12,
				RandomInputLen: 16, RandomOutputLen: 8, RandomRangeRatio: 0.5,
				RequestRate: math.Inf(1), Burstiness: 1, MaxConcurrency: 4, IgnoreEOS: true,
				Seed: 7, Warmup: 1, Tokenize: true, CheckMetrics: true, Tolerance: 0.05,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 12 || res.Failed != 0 {
				t.Fatalf("completed %d failed %d: %v", res.Completed, res.Failed, res.Errors)
			}
			if !fake.sawIgnoreEOS || !fake.sawTokens {
				t.Errorf("requests did not carry ignore_eos and token-id prompts")
			}
			if res.MaxConcurrentRequests > 4 {
				t.Errorf("peak concurrency %d exceeds --max-concurrency 4", res.MaxConcurrentRequests)
			}
			if res.TTFT.Mean <= 0 || res.E2EL.Mean < res.TTFT.Mean || res.TotalOutputTokens == 0 {
				t.Errorf("implausible result: ttft %v e2el %v out %d", res.TTFT.Mean, res.E2EL.Mean, res.TotalOutputTokens)
			}
			if got := res.MetricsOK(); got != tc.wantOK {
				t.Errorf("MetricsOK = %v, want %v; checks %+v", got, tc.wantOK, res.Checks)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			// vLLM's defaults: statistics of ttft, tpot and itl at P99, no
			// per-request lists without --save-detailed, request_goodput null
			// without --goodput.
			for _, k := range []string{"completed", "total_input_tokens", "total_output_tokens", "request_throughput",
				"output_throughput", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_itl_ms",
				"latencies", "queue_times", "request_goodput", "endpoint_type", "label", "tokenizer_id", "rtfx"} {
				if _, ok := m[k]; !ok {
					t.Errorf("JSON result lacks vLLM field %q", k)
				}
			}
			for _, k := range []string{"mean_e2el_ms", "p90_itl_ms", "ttfts", "itls", "errors", "generated_texts"} {
				if _, ok := m[k]; ok {
					t.Errorf("JSON result has %q, which vLLM saves only when asked", k)
				}
			}
			if m["request_goodput"] != nil || m["backend"] != "openai" {
				t.Errorf("request_goodput %v, backend %v", m["request_goodput"], m["backend"])
			}
			var table, svg strings.Builder
			res.WriteTable(&table)
			if !strings.Contains(table.String(), "Serving Benchmark Result") || !strings.Contains(table.String(), "Mean TTFT (ms):") ||
				!strings.Contains(table.String(), "P99 TTFT (ms):") || strings.Contains(table.String(), "P50 TTFT") {
				t.Errorf("table:\n%s", table.String())
			}
			if err := res.WritePlotSVG(&svg); err != nil || !strings.Contains(svg.String(), "<circle") {
				t.Errorf("plot: %v", err)
			}
		})
	}
}

// TestScrapeLatencyDuringTheRun: with ScrapeInterval the run times scrapes
// of /metrics while requests are in flight (the fake holds every request
// until one came), reports them in the table and the JSON, and counts a
// failing /metrics as failed scrapes, not failed requests.
func TestScrapeLatencyDuringTheRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failMetrics bool
	}{
		{"metrics served", false},
		{"metrics failing", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeServer{scraped: make(chan struct{}), failMetrics: tc.failMetrics}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			res, err := Run(context.Background(), Config{
				BaseURL: srv.URL, Endpoint: "/v1/completions", NumPrompts: 4,
				RandomInputLen: 8, RandomOutputLen: 4, RequestRate: math.Inf(1), Burstiness: 1,
				Seed: 3, Tokenize: true, Percentiles: []float64{50, 99}, ScrapeInterval: time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 4 || res.Failed != 0 {
				t.Fatalf("completed %d failed %d: %v", res.Completed, res.Failed, res.Errors)
			}
			wantTable := []string{"Server /metrics scrape latency", "Failed scrapes:"}
			if tc.failMetrics {
				if len(res.ScrapeErrors) == 0 || !strings.Contains(res.ScrapeErrors[0], "500") || len(res.ScrapeLatencies) != 0 || res.Scrape != nil {
					t.Fatalf("scrapes %v (summary %v), errors %q: want only failures", res.ScrapeLatencies, res.Scrape, res.ScrapeErrors)
				}
				wantTable = append(wantTable, "First error:")
			} else {
				if len(res.ScrapeLatencies) == 0 || len(res.ScrapeErrors) != 0 || res.Scrape == nil || res.Scrape.Median <= 0 {
					t.Fatalf("scrapes %v (summary %v), errors %q", res.ScrapeLatencies, res.Scrape, res.ScrapeErrors)
				}
				wantTable = append(wantTable, "P99 scrape latency (ms):")
			}
			var table strings.Builder
			res.WriteTable(&table)
			for _, want := range wantTable {
				if !strings.Contains(table.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, table.String())
				}
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			if _, ok := m["p99_metrics_scrape_ms"]; ok == tc.failMetrics {
				t.Errorf("JSON result: p99_metrics_scrape_ms present = %v with failing metrics %v", ok, tc.failMetrics)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{BaseURL: "http://x", Endpoint: "/v1/completions", NumPrompts: 1, RandomInputLen: 1, RandomOutputLen: 1, RequestRate: 1, Burstiness: 1}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"endpoint":    func(c *Config) { c.Endpoint = "/v1/embeddings" },
		"prompts":     func(c *Config) { c.NumPrompts = 0 },
		"range":       func(c *Config) { c.RandomRangeRatio = 1 },
		"rate":        func(c *Config) { c.RequestRate = 0 },
		"burstiness":  func(c *Config) { c.Burstiness = -1 },
		"percentiles": func(c *Config) { c.Percentiles = []float64{100} },
	} {
		c := good
		mut(&c)
		if c.Validate() == nil {
			t.Errorf("%s: Validate accepted a bad config", name)
		}
	}
}

// TestStreamErrorEventFailsTheRequest: a server that fails mid-stream sends
// an OpenAI error envelope as an event and then [DONE] (govllm and vLLM do);
// the request is a failure, not a success with a short output.
func TestStreamErrorEventFailsTheRequest(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
	}{
		{"after a token", "data: {\"choices\":[{\"index\":0,\"text\":\"a\"}]}\n\n" +
			"data: {\"error\":{\"message\":\"engine died\",\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n"},
		{"before any token", "data: {\"error\":{\"message\":\"engine died\",\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.stream)
			}))
			defer srv.Close()
			res, err := Run(context.Background(), Config{
				BaseURL: srv.URL, Endpoint: "/v1/completions", Model: "m", NumPrompts: 2,
				RandomInputLen: 4, RandomOutputLen: 4, RequestRate: math.Inf(1), Burstiness: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 0 || res.Failed != 2 {
				t.Fatalf("completed %d, failed %d; want 0 and 2", res.Completed, res.Failed)
			}
			if !strings.Contains(res.Errors[0], "engine died") {
				t.Errorf("error %q does not carry the server's message", res.Errors[0])
			}
		})
	}
}

// TestRunRejectsBadWarmups: a negative warm-up count is a configuration
// error, not a slice-bounds panic.
func TestRunRejectsBadWarmups(t *testing.T) {
	c := Config{BaseURL: "http://x", Endpoint: "/v1/completions", NumPrompts: 1, RandomInputLen: 1, RandomOutputLen: 1,
		RequestRate: 1, Burstiness: 1, Warmup: -1}
	if err := c.Validate(); err == nil {
		t.Fatal("Validate accepted Warmup -1")
	}
	c.Warmup, c.Tolerance = 0, -0.1
	if err := c.Validate(); err == nil {
		t.Fatal("Validate accepted a negative metrics tolerance")
	}
}

// TestRunLeavesNoConnections: Run's own transport closes its idle
// keep-alive connections when it returns, while the server stays up.
func TestRunLeavesNoConnections(t *testing.T) {
	srv := httptest.NewServer(&fakeServer{})
	defer srv.Close()
	before := goleak.IgnoreCurrent() // the server's accept loop
	if _, err := Run(context.Background(), Config{
		BaseURL: srv.URL, Endpoint: "/v1/completions", NumPrompts: 4, RandomInputLen: 4, RandomOutputLen: 2,
		RequestRate: math.Inf(1), Burstiness: 1, MaxConcurrency: 2, CheckMetrics: true,
	}); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}

func TestReadStream(t *testing.T) {
	const usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n"
	for _, tc := range []struct {
		name, stream string
		wantErr      string // "" = success
		text         string
		itls         int
	}{
		{"completions", "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n" + usage + "data: [DONE]\n\n", "", "ab", 1},
		{"chat, no space after data:, comments and role chunk", ": ping\n\ndata:{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
			"data:{\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" + usage + "data:[DONE]\n\n", "", "hi", 0},
		{"no [DONE]", "data: {\"choices\":[{\"text\":\"a\"}]}\n\n", "without data: [DONE]", "", 0},
		{"bad chunk", "data: {nope\n\ndata: [DONE]\n\n", "bad stream chunk", "", 0},
		{"no content", usage + "data: [DONE]\n\n", "no content chunk", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := requestResult{Start: time.Now()}
			readStream(strings.NewReader(tc.stream), &res)
			if tc.wantErr != "" {
				if res.Success || !strings.Contains(res.Err, tc.wantErr) {
					t.Fatalf("success %v, err %q; want error %q", res.Success, res.Err, tc.wantErr)
				}
				return
			}
			if !res.Success || res.Text != tc.text || len(res.ITL) != tc.itls || res.PromptTokens != 3 || res.OutputTokens != 2 {
				t.Errorf("got %+v", res)
			}
		})
	}
}

// TestCrossCheckUnderAnAlias: a server with several served model names
// labels its metrics with the first; a benchmark of another alias still
// finds the server's figures (it used to read zeros and report a mismatch).
func TestCrossCheckUnderAnAlias(t *testing.T) {
	srv := httptest.NewServer(&fakeServer{})
	defer srv.Close()
	res, err := Run(context.Background(), Config{
		BaseURL: srv.URL, Endpoint: "/v1/completions", Model: "alias", NumPrompts: 3,
		RandomInputLen: 4, RandomOutputLen: 2, RequestRate: math.Inf(1), Burstiness: 1, Tokenize: true, CheckMetrics: true, Tolerance: 0.05,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 3 || !res.MetricsOK() {
		t.Errorf("completed %d; cross-check under an alias: %+v", res.Completed, res.Checks)
	}
}

// TestCrossCheckWithAReplicaGone: a --metrics-url replica whose /metrics
// is gone after the run (drained and exited) leaves the cross-check undone
// with the reason, in the table and the JSON, and MetricsOK false; the
// benchmark's own result stands.
func TestCrossCheckWithAReplicaGone(t *testing.T) {
	served, gone := httptest.NewServer(&fakeServer{}), httptest.NewServer(&fakeServer{failAfter: 1})
	defer served.Close()
	defer gone.Close()
	res, err := Run(context.Background(), Config{
		BaseURL: served.URL, Endpoint: "/v1/completions", NumPrompts: 3, RandomInputLen: 4, RandomOutputLen: 2,
		RequestRate: math.Inf(1), Burstiness: 1, Tokenize: true, CheckMetrics: true, Tolerance: 0.05,
		MetricsURLs: []string{served.URL + "/metrics", gone.URL + "/metrics"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	res.WriteTable(&table)
	b, _ := json.Marshal(res)
	if res.Completed != 3 || res.MetricsOK() || len(res.Checks) != 0 || !strings.Contains(res.CheckError, gone.URL) ||
		!strings.Contains(table.String(), "not done: scraping /metrics after the run") || !strings.Contains(string(b), `"metrics_check_error"`) {
		t.Errorf("completed %d, checks %v, error %q\n%s", res.Completed, res.Checks, res.CheckError, table.String())
	}
}
