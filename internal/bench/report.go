package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// WriteTable prints the result as vLLM's "Serving Benchmark Result"
// table (the same rows, labels and formats), then govllm's /metrics
// sections.
func (r *Result) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%s\n", center(" Serving Benchmark Result ", "=", 50))
	line(w, "Successful requests:", r.Completed)
	line(w, "Failed requests:", r.Failed)
	if r.MaxConcurrency != nil {
		line(w, "Maximum request concurrency:", *r.MaxConcurrency)
	}
	if rate, ok := r.RequestRate.(float64); ok {
		line(w, "Request rate configured (RPS):", rate)
	}
	line(w, "Benchmark duration (s):", r.Duration)
	line(w, "Total input tokens:", r.TotalInputTokens)
	line(w, "Total generated tokens:", r.TotalOutputTokens)
	line(w, "Request throughput (req/s):", r.RequestThroughput)
	if r.RequestGoodput != nil {
		line(w, "Request goodput (req/s):", *r.RequestGoodput)
	}
	line(w, "Output token throughput (tok/s):", r.OutputThroughput)
	line(w, "Peak output token throughput (tok/s):", r.MaxOutputTokensPerS)
	line(w, "Peak concurrent requests:", float64(r.MaxConcurrentRequests))
	line(w, "Total token throughput (tok/s):", r.TotalTokenThroughput)
	for _, m := range r.selectedMetrics() {
		section(w, m.title)
		line(w, fmt.Sprintf("Mean %s (ms):", m.short), m.s.Mean)
		line(w, fmt.Sprintf("Median %s (ms):", m.short), m.s.Median)
		for _, p := range m.s.Percentiles {
			line(w, fmt.Sprintf("P%s %s (ms):", pLabel(p.P), m.short), p.Value)
		}
	}
	r.writeScrapes(w)
	if r.CheckError != "" {
		section(w, "Server /metrics cross-check")
		fmt.Fprintf(w, "not done: %s\n", r.CheckError)
	}
	if len(r.Checks) > 0 {
		section(w, "Server /metrics cross-check")
		fmt.Fprintf(w, "%-24s %12s %12s  %s\n", "figure", "client", "server", "")
		for _, c := range r.Checks {
			verdict := "ok"
			if !c.OK {
				verdict = "MISMATCH (" + c.Rule + ")"
			}
			fmt.Fprintf(w, "%-24s %12.2f %12.2f  %s\n", c.Name, c.Client, c.Server, verdict)
		}
	}
	fmt.Fprintln(w, strings.Repeat("=", 50))
}

// line prints one row as vLLM's "{:<40} {:<10}" (floats "{:<10.2f}").
func line(w io.Writer, label string, v any) {
	switch v := v.(type) {
	case float64:
		fmt.Fprintf(w, "%-40s %-10.2f\n", label, v)
	default:
		fmt.Fprintf(w, "%-40s %-10v\n", label, v)
	}
}

// section prints a title centred in dashes, as vLLM's.
func section(w io.Writer, title string) {
	fmt.Fprintln(w, center(title, "-", 50))
}

// metricStats is one statistic of --percentile-metrics.
type metricStats struct {
	key, title, short string
	s                 Summary
}

// selectedMetrics are the statistics of r.PercentileMetrics in vLLM's
// order; the client-queue ones only when they were measured.
func (r *Result) selectedMetrics() []metricStats {
	all := []metricStats{
		{"ttft", "Time to First Token", "TTFT", r.TTFT},
		{"tpot", "Time per Output Token (excl. 1st token)", "TPOT", r.TPOT},
		{"itl", "Inter-token Latency", "ITL", r.ITL},
		{"e2el", "End-to-end Latency", "E2EL", r.E2EL},
	}
	if r.QueueTime != nil {
		all = append(all, metricStats{"client_queue_time", "Client-side Queueing", "Client Queue Time", *r.QueueTime})
	}
	if r.E2ELQueue != nil {
		all = append(all, metricStats{"e2el_including_client_queue", "Queue-inclusive End-to-end Latency", "E2EL incl. Client Queue", *r.E2ELQueue})
	}
	var out []metricStats
	for _, m := range all {
		if slices.Contains(r.PercentileMetrics, m.key) {
			out = append(out, m)
		}
	}
	return out
}

// writeScrapes prints the latency of the /metrics scrapes taken during the
// run, when there were any.
func (r *Result) writeScrapes(w io.Writer) {
	if len(r.ScrapeErrors) > 0 && r.Scrape == nil {
		section(w, "Server /metrics scrape latency")
		line(w, "Scrapes during the run:", 0)
		line(w, "Failed scrapes:", len(r.ScrapeErrors))
		line(w, "First error:", r.ScrapeErrors[0])
	}
	if r.Scrape == nil {
		return
	}
	section(w, "Server /metrics scrape latency")
	line(w, "Scrapes during the run:", len(r.ScrapeLatencies))
	line(w, "Failed scrapes:", len(r.ScrapeErrors))
	line(w, "Mean scrape latency (ms):", r.Scrape.Mean)
	line(w, "Median scrape latency (ms):", r.Scrape.Median)
	for _, p := range r.Scrape.Percentiles {
		line(w, fmt.Sprintf("P%s scrape latency (ms):", pLabel(p.P)), p.Value)
	}
	line(w, "Max scrape latency (ms):", slices.Max(r.ScrapeLatencies))
}

func center(s, fill string, width int) string {
	pad := max(0, width-len(s))
	return strings.Repeat(fill, pad/2) + s + strings.Repeat(fill, pad-pad/2)
}

// MetricsOK reports whether the cross-check was done and every row
// passed.
func (r *Result) MetricsOK() bool {
	if r.CheckError != "" {
		return false
	}
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// detailKeys are the per-request lists vLLM saves only with
// --save-detailed.
var detailKeys = []string{"input_lens", "output_lens", "start_times", "ttfts", "itls", "generated_texts", "errors"}

// MarshalJSON adds vLLM's flattened statistic fields of the selected
// metrics (mean_ttft_ms, median_ttft_ms, std_ttft_ms, p99_ttft_ms, …),
// and the same for metrics_scrape when scrapes were timed, adds the
// --metadata pairs, and drops the per-request lists unless Detailed.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	b, err := json.Marshal((*plain)(r))
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	sums := map[string]Summary{}
	for _, s := range r.selectedMetrics() {
		sums[s.key] = s.s
	}
	if r.Scrape != nil {
		sums["metrics_scrape"] = *r.Scrape
	}
	for name, s := range sums {
		m["mean_"+name+"_ms"] = s.Mean
		m["median_"+name+"_ms"] = s.Median
		m["std_"+name+"_ms"] = s.Std
		for _, p := range s.Percentiles {
			m["p"+pLabel(p.P)+"_"+name+"_ms"] = p.Value
		}
	}
	for k, v := range r.Metadata {
		m[k] = v
	}
	if !r.Detailed {
		for _, k := range detailKeys {
			delete(m, k)
		}
	}
	return json.Marshal(m)
}

// SaveJSON writes the result to path, or appends it on a new line when
// appendTo (vLLM's --append-result).
func (r *Result) SaveJSON(path string, appendTo bool) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && appendTo && st.Size() > 0 {
		b = append([]byte("\n"), b...)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// progress shows a bar on a terminal and plain lines otherwise.
type progress struct {
	mu        sync.Mutex
	w         io.Writer
	tty       bool
	total     int
	n, failed int
	start     time.Time
	lastLine  time.Time
}

func newProgress(w io.Writer, tty bool, total int) *progress {
	return &progress{w: w, tty: tty, total: total, start: time.Now()}
}

func (p *progress) done(ok bool) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if !ok {
		p.failed++
	}
	elapsed := time.Since(p.start)
	if p.tty {
		const width = 30
		filled := p.n * width / p.total
		fmt.Fprintf(p.w, "\r%3d%% |%s%s| %d/%d [%s, failed %d]", p.n*100/p.total,
			strings.Repeat("█", filled), strings.Repeat(" ", width-filled), p.n, p.total,
			elapsed.Round(100*time.Millisecond), p.failed)
		return
	}
	if p.n == p.total || time.Since(p.lastLine) >= 2*time.Second {
		p.lastLine = time.Now()
		fmt.Fprintf(p.w, "progress: %d/%d requests done (%d failed) after %.1fs\n", p.n, p.total, p.failed, elapsed.Seconds())
	}
}

func (p *progress) finish() {
	if p.w != nil && p.tty {
		fmt.Fprintln(p.w)
	}
}
