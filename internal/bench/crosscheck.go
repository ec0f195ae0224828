package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serverFigures are the server-side totals the cross-check compares.
type serverFigures struct {
	Requests         float64 // Σ request_success_total over reasons
	PromptTokens     float64
	GenerationTokens float64
	TTFTSum          float64
	TTFTCount        float64
	E2ESum           float64
	E2ECount         float64
}

func (a serverFigures) sub(b serverFigures) serverFigures {
	return serverFigures{
		Requests:         a.Requests - b.Requests,
		PromptTokens:     a.PromptTokens - b.PromptTokens,
		GenerationTokens: a.GenerationTokens - b.GenerationTokens,
		TTFTSum:          a.TTFTSum - b.TTFTSum,
		TTFTCount:        a.TTFTCount - b.TTFTCount,
		E2ESum:           a.E2ESum - b.E2ESum,
		E2ECount:         a.E2ECount - b.E2ECount,
	}
}

func (a serverFigures) add(b serverFigures) serverFigures {
	return a.sub(serverFigures{}.sub(b))
}

// scrapeAll sums the figures of cfg.MetricsURLs (by default the server's
// own /metrics): behind a balancer, every replica's.
func (c *client) scrapeAll(ctx context.Context, cfg *Config) (serverFigures, error) {
	urls := cfg.MetricsURLs
	if len(urls) == 0 {
		urls = []string{c.baseURL + "/metrics"}
	}
	var sum serverFigures
	for _, u := range urls {
		f, err := c.scrape(ctx, u, cfg.Model)
		if err != nil {
			return sum, fmt.Errorf("%s: %w", u, err)
		}
		sum = sum.add(f)
	}
	return sum, nil
}

// scrape reads one server's /metrics (vLLM's catalog) at url for the
// model: the series labelled model_name=modelName, or every series when no
// series carries that name (modelName is an alias of the served model).
func (c *client) scrape(ctx context.Context, url, modelName string) (serverFigures, error) {
	var f serverFigures
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return f, err
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return f, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return f, errorFrom(resp)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return f, fmt.Errorf("parsing /metrics: %w", err)
	}
	// The server labels its series with one model name (vLLM: the first
	// served name); the benchmark may have asked for another alias. Filter
	// by the requested name only when the server exposes it.
	label := func(m *dto.Metric) (string, bool) {
		for _, l := range m.GetLabel() {
			if l.GetName() == "model_name" {
				return l.GetValue(), true
			}
		}
		return "", false
	}
	filter := false
	for _, m := range fams["vllm:request_success_total"].GetMetric() {
		if v, ok := label(m); ok && v == modelName {
			filter = true
		}
	}
	ours := func(m *dto.Metric) bool {
		v, ok := label(m)
		return !filter || !ok || v == modelName
	}
	counter := func(name string) float64 {
		var s float64
		for _, m := range fams[name].GetMetric() {
			if ours(m) {
				s += m.GetCounter().GetValue()
			}
		}
		return s
	}
	hist := func(name string) (sum, count float64) {
		for _, m := range fams[name].GetMetric() {
			if ours(m) {
				sum += m.GetHistogram().GetSampleSum()
				count += float64(m.GetHistogram().GetSampleCount())
			}
		}
		return
	}
	if _, ok := fams["vllm:request_success_total"]; !ok {
		return f, fmt.Errorf("/metrics has no vllm:request_success_total (is stats logging disabled?)")
	}
	f.Requests = counter("vllm:request_success_total")
	f.PromptTokens = counter("vllm:prompt_tokens_total")
	f.GenerationTokens = counter("vllm:generation_tokens_total")
	f.TTFTSum, f.TTFTCount = hist("vllm:time_to_first_token_seconds")
	f.E2ESum, f.E2ECount = hist("vllm:e2e_request_latency_seconds")
	return f, nil
}

// Check is one row of the metrics cross-check.
type Check struct {
	Name   string  `json:"name"`
	Client float64 `json:"client"`
	Server float64 `json:"server"`
	Rule   string  `json:"rule"`
	OK     bool    `json:"ok"`
}

// crossCheck compares the client's measurements with the server's deltas.
// Counts must be equal; the server's mean TTFT and e2e latency must not
// exceed the client's (the server's clock starts after the request
// arrives and stops before the last byte leaves) by more than tol
// (relative) plus 1 ms.
func crossCheck(r *Result, d serverFigures, tol float64) []Check {
	eq := func(name string, client, server float64) Check {
		return Check{Name: name, Client: client, Server: server, Rule: "equal", OK: client == server}
	}
	le := func(name string, client, server float64) Check {
		return Check{Name: name, Client: client, Server: server,
			Rule: fmt.Sprintf("server ≤ client·(1+%g) + 1ms", tol),
			OK:   !math.IsNaN(server) && server <= client*(1+tol)+1}
	}
	mean := func(sum, count float64) float64 {
		if count == 0 {
			return math.NaN()
		}
		return sum / count * 1000
	}
	return []Check{
		eq("requests", float64(r.Completed), d.Requests),
		eq("prompt tokens", float64(r.TotalInputTokens), d.PromptTokens),
		eq("generation tokens", float64(r.TotalOutputTokens), d.GenerationTokens),
		le("mean TTFT (ms)", r.TTFT.Mean, mean(d.TTFTSum, d.TTFTCount)),
		le("mean E2E latency (ms)", r.E2EL.Mean, mean(d.E2ESum, d.E2ECount)),
	}
}
