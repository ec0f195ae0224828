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

// WriteTable prints the result like vLLM's "Serving Benchmark Result".
func (r *Result) WriteTable(w io.Writer) {
	line := func(label string, v any) {
		switch v := v.(type) {
		case float64:
			fmt.Fprintf(w, "%-40s %-10.2f\n", label, v)
		default:
			fmt.Fprintf(w, "%-40s %-10v\n", label, v)
		}
	}
	section := func(title string) {
		pad := 50 - len(title)
		fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("-", pad/2), title, strings.Repeat("-", pad-pad/2))
	}
	fmt.Fprintf(w, "%s\n", center(" Serving Benchmark Result ", "=", 50))
	line("Successful requests:", r.Completed)
	line("Failed requests:", r.Failed)
	if r.MaxConcurrency != nil {
		line("Maximum request concurrency:", *r.MaxConcurrency)
	}
	if rate, ok := r.RequestRate.(float64); ok {
		line("Request rate configured (RPS):", rate)
	}
	line("Benchmark duration (s):", r.Duration)
	line("Total input tokens:", r.TotalInputTokens)
	line("Total generated tokens:", r.TotalOutputTokens)
	line("Request throughput (req/s):", r.RequestThroughput)
	line("Output token throughput (tok/s):", r.OutputThroughput)
	line("Peak output token throughput (tok/s):", r.MaxOutputTokensPerS)
	line("Peak concurrent requests:", r.MaxConcurrentRequests)
	line("Total token throughput (tok/s):", r.TotalTokenThroughput)
	for _, m := range []struct {
		title, short string
		s            Summary
	}{
		{"Time to First Token", "TTFT", r.TTFT},
		{"Time per Output Token (excl. 1st token)", "TPOT", r.TPOT},
		{"Inter-token Latency", "ITL", r.ITL},
		{"End-to-end Latency", "E2EL", r.E2EL},
	} {
		section(m.title)
		line(fmt.Sprintf("Mean %s (ms):", m.short), m.s.Mean)
		line(fmt.Sprintf("Median %s (ms):", m.short), m.s.Median)
		for _, p := range m.s.Percentiles {
			if p.P == 50 {
				continue // the median, printed above
			}
			line(fmt.Sprintf("P%s %s (ms):", pLabel(p.P), m.short), p.Value)
		}
	}
	if len(r.ScrapeErrors) > 0 && r.Scrape == nil {
		section("Server /metrics scrape latency")
		line("Scrapes during the run:", 0)
		line("Failed scrapes:", len(r.ScrapeErrors))
		line("First error:", r.ScrapeErrors[0])
	}
	if r.Scrape != nil {
		section("Server /metrics scrape latency")
		line("Scrapes during the run:", len(r.ScrapeLatencies))
		line("Failed scrapes:", len(r.ScrapeErrors))
		line("Mean scrape latency (ms):", r.Scrape.Mean)
		line("Median scrape latency (ms):", r.Scrape.Median)
		for _, p := range r.Scrape.Percentiles {
			if p.P != 50 {
				line(fmt.Sprintf("P%s scrape latency (ms):", pLabel(p.P)), p.Value)
			}
		}
		line("Max scrape latency (ms):", slices.Max(r.ScrapeLatencies))
	}
	if len(r.Checks) > 0 {
		section("Server /metrics cross-check")
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

func center(s, fill string, width int) string {
	pad := max(0, width-len(s))
	return strings.Repeat(fill, pad/2) + s + strings.Repeat(fill, pad-pad/2)
}

// MetricsOK reports whether every cross-check row passed.
func (r *Result) MetricsOK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// MarshalJSON adds vLLM's flattened statistic fields (mean_ttft_ms,
// median_ttft_ms, std_ttft_ms, p99_ttft_ms, … for ttft, tpot, itl, e2el),
// and the same for metrics_scrape when scrapes were timed.
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
	sums := map[string]Summary{"ttft": r.TTFT, "tpot": r.TPOT, "itl": r.ITL, "e2el": r.E2EL}
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
	return json.Marshal(m)
}

// SaveJSON writes the result to path.
func (r *Result) SaveJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
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
