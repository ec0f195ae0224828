package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config is one benchmark run. Field names follow vLLM's flags.
type Config struct {
	BaseURL          string // e.g. http://127.0.0.1:8000
	Endpoint         string // /v1/completions or /v1/chat/completions
	Model            string // model name sent in requests; "" → first of GET /v1/models
	APIKey           string
	NumPrompts       int
	RandomInputLen   int
	RandomOutputLen  int
	RandomRangeRatio float64 // lengths uniform in len·[1−r, 1+r]
	RequestRate      float64 // requests/s; +Inf sends all at once
	Burstiness       float64 // gamma shape; 1 = Poisson
	MaxConcurrency   int     // 0 = unlimited
	IgnoreEOS        bool
	Seed             int64
	Warmup           int           // warm-up requests before the measured run
	Percentiles      []float64     // e.g. 50, 90, 99
	Tolerance        float64       // relative tolerance of the latency cross-check
	Tokenize         bool          // build exact-length prompts with the server's /tokenize
	CheckMetrics     bool          // scrape /metrics before and after
	ScrapeInterval   time.Duration // > 0: also time a scrape of /metrics this often during the run
	Progress         io.Writer     // progress bar or lines; nil = quiet
	ProgressIsTTY    bool
	HTTPClient       *http.Client
}

// Validate reports a configuration error.
func (c *Config) Validate() error {
	switch {
	case c.BaseURL == "":
		return errors.New("--base-url is required")
	case c.Endpoint != "/v1/completions" && c.Endpoint != "/v1/chat/completions":
		return fmt.Errorf("--endpoint must be /v1/completions or /v1/chat/completions, got %q", c.Endpoint)
	case c.NumPrompts < 1:
		return fmt.Errorf("--num-prompts must be at least 1, got %d", c.NumPrompts)
	case c.RandomInputLen < 1 || c.RandomOutputLen < 1:
		return errors.New("--random-input-len and --random-output-len must be at least 1")
	case c.RandomRangeRatio < 0 || c.RandomRangeRatio >= 1:
		return fmt.Errorf("--random-range-ratio must be in [0, 1), got %g", c.RandomRangeRatio)
	case !(c.RequestRate > 0):
		return fmt.Errorf("--request-rate must be positive or inf, got %g", c.RequestRate)
	case !(c.Burstiness > 0):
		return fmt.Errorf("--burstiness must be positive, got %g", c.Burstiness)
	case c.MaxConcurrency < 0:
		return fmt.Errorf("--max-concurrency must be non-negative, got %d", c.MaxConcurrency)
	case c.Warmup < 0:
		return fmt.Errorf("--num-warmups must be non-negative, got %d", c.Warmup)
	case !(c.Tolerance >= 0):
		return fmt.Errorf("--metrics-tolerance must be non-negative, got %g", c.Tolerance)
	case c.ScrapeInterval < 0:
		return fmt.Errorf("--metrics-scrape-interval must be non-negative, got %v", c.ScrapeInterval)
	}
	for _, p := range c.Percentiles {
		if p <= 0 || p >= 100 {
			return fmt.Errorf("percentiles must be in (0, 100), got %g", p)
		}
	}
	return nil
}

// Result is the benchmark's outcome; JSON field names are vLLM's.
type Result struct {
	Date                  string      `json:"date"`
	Backend               string      `json:"backend"`
	ModelID               string      `json:"model_id"`
	Endpoint              string      `json:"endpoint"`
	NumPrompts            int         `json:"num_prompts"`
	RequestRate           any         `json:"request_rate"` // number or "inf"
	Burstiness            float64     `json:"burstiness"`
	MaxConcurrency        *int        `json:"max_concurrency"`
	Duration              float64     `json:"duration"`
	Completed             int         `json:"completed"`
	Failed                int         `json:"failed"`
	TotalInputTokens      int         `json:"total_input_tokens"`
	TotalOutputTokens     int         `json:"total_output_tokens"`
	RequestThroughput     float64     `json:"request_throughput"`
	OutputThroughput      float64     `json:"output_throughput"`
	TotalTokenThroughput  float64     `json:"total_token_throughput"`
	MaxOutputTokensPerS   float64     `json:"max_output_tokens_per_s"`
	MaxConcurrentRequests int         `json:"max_concurrent_requests"`
	InputLens             []int       `json:"input_lens"`
	OutputLens            []int       `json:"output_lens"`
	TTFTs                 []float64   `json:"ttfts"`       // seconds
	ITLs                  [][]float64 `json:"itls"`        // seconds
	StartTimes            []float64   `json:"start_times"` // seconds since the run began
	GeneratedTexts        []string    `json:"generated_texts"`
	Errors                []string    `json:"errors"`

	TTFT, TPOT, ITL, E2EL Summary   `json:"-"`
	Checks                []Check   `json:"metrics_check,omitempty"`
	Percentiles           []float64 `json:"-"`

	// With Config.ScrapeInterval: the latency of each /metrics scrape
	// during the run (ms; govllm's own fields, not vLLM's), their summary
	// (nil when no scrape succeeded), and the failed scrapes' errors.
	ScrapeLatencies []float64 `json:"metrics_scrape_latencies_ms,omitempty"`
	ScrapeErrors    []string  `json:"metrics_scrape_errors,omitempty"`
	Scrape          *Summary  `json:"-"`
}

// Run executes the benchmark.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Percentiles) == 0 {
		cfg.Percentiles = []float64{50, 90, 99}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := &http.Transport{MaxIdleConnsPerHost: 1024}
		defer tr.CloseIdleConnections() // no keep-alive goroutines outlive the run
		hc = &http.Client{Transport: tr}
	}
	c := &client{http: hc, baseURL: strings.TrimRight(cfg.BaseURL, "/"), apiKey: cfg.APIKey}
	if cfg.Model == "" {
		m, err := c.firstModel(ctx)
		if err != nil {
			return nil, fmt.Errorf("finding the served model: %w", err)
		}
		cfg.Model = m
	}
	var tok tokenizeFunc
	if cfg.Tokenize && cfg.Endpoint == "/v1/completions" {
		tok = func(ctx context.Context, text string) ([]int32, error) { return c.tokenize(ctx, cfg.Model, text) }
	}
	prompts, err := makeDataset(ctx, &cfg, tok)
	if err != nil {
		return nil, fmt.Errorf("building prompts with the server's /tokenize (use --tokenize=false for servers without it): %w", err)
	}
	warm, prompts := prompts[:cfg.Warmup], prompts[cfg.Warmup:]
	for i := range warm {
		if r := c.send(ctx, &cfg, &warm[i]); !r.Success {
			return nil, fmt.Errorf("warm-up request failed: %s", r.Err)
		}
	}
	var before serverFigures
	if cfg.CheckMetrics {
		if before, err = c.scrape(ctx, cfg.Model); err != nil {
			return nil, fmt.Errorf("scraping /metrics before the run: %w", err)
		}
	}
	var (
		scrapeLat  []time.Duration
		scrapeErrs []string
		stop       = make(chan struct{})
		scraped    = make(chan struct{})
	)
	go func() {
		defer close(scraped)
		if cfg.ScrapeInterval > 0 {
			scrapeLat, scrapeErrs = c.scrapeLatencies(ctx, stop, cfg.ScrapeInterval)
		}
	}()
	results, dur := runAll(ctx, c, &cfg, prompts)
	close(stop)
	<-scraped
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := summarizeRun(&cfg, prompts, results, dur)
	res.ScrapeErrors = scrapeErrs
	if len(scrapeLat) > 0 {
		res.ScrapeLatencies = make([]float64, len(scrapeLat))
		for i, d := range scrapeLat {
			res.ScrapeLatencies[i] = float64(d) / float64(time.Millisecond)
		}
		s := summarize(res.ScrapeLatencies, cfg.Percentiles)
		res.Scrape = &s
	}
	if cfg.CheckMetrics {
		after, err := c.scrape(ctx, cfg.Model)
		if err != nil {
			return nil, fmt.Errorf("scraping /metrics after the run: %w", err)
		}
		res.Checks = crossCheck(res, after.sub(before), cfg.Tolerance)
	}
	return res, nil
}

func (c *client) firstModel(ctx context.Context) (string, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", errorFrom(resp)
	}
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	if len(out.Data) == 0 {
		return "", errors.New("GET /v1/models lists no model")
	}
	return out.Data[0].ID, nil
}

// runAll sends every prompt on the arrival schedule under the concurrency
// cap and returns the results in prompt order and the run's duration.
func runAll(ctx context.Context, c *client, cfg *Config, prompts []Prompt) ([]requestResult, time.Duration) {
	results := make([]requestResult, len(prompts))
	var sem chan struct{}
	if cfg.MaxConcurrency > 0 {
		sem = make(chan struct{}, cfg.MaxConcurrency)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 42))
	prog := newProgress(cfg.Progress, cfg.ProgressIsTTY, len(prompts))
	var wg sync.WaitGroup
	start := time.Now()
	next := start
	for i := range prompts {
		if !math.IsInf(cfg.RequestRate, 1) {
			next = next.Add(gammaInterval(rng, cfg.RequestRate, cfg.Burstiness))
			select {
			case <-time.After(time.Until(next)):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.send(ctx, cfg, &prompts[i])
			if sem != nil {
				<-sem
			}
			prog.done(results[i].Success)
		}()
	}
	wg.Wait()
	prog.finish()
	return results, time.Since(start)
}

// gammaInterval draws the gap to the next arrival: gamma(shape=burstiness,
// scale=1/(rate·burstiness)), so the mean rate is `rate` and burstiness 1
// is a Poisson process (vLLM's arrival model).
func gammaInterval(rng *rand.Rand, rate, burstiness float64) time.Duration {
	theta := 1 / (rate * burstiness)
	return time.Duration(gamma(rng, burstiness) * theta * float64(time.Second))
}

// gamma samples Gamma(shape, 1) by Marsaglia and Tsang.
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// summarizeRun computes throughput and latency statistics (vLLM's
// calculate_metrics).
func summarizeRun(cfg *Config, prompts []Prompt, results []requestResult, dur time.Duration) *Result {
	r := &Result{
		Date: time.Now().Format("20060102-150405"), Backend: "openai", ModelID: cfg.Model,
		Endpoint: cfg.Endpoint, NumPrompts: len(prompts), Burstiness: cfg.Burstiness,
		Duration: dur.Seconds(), Percentiles: cfg.Percentiles,
	}
	if math.IsInf(cfg.RequestRate, 1) {
		r.RequestRate = "inf"
	} else {
		r.RequestRate = cfg.RequestRate
	}
	if cfg.MaxConcurrency > 0 {
		mc := cfg.MaxConcurrency
		r.MaxConcurrency = &mc
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var ttfts, tpots, itls, e2els []float64
	start := time.Time{}
	for _, res := range results {
		if !res.Start.IsZero() && (start.IsZero() || res.Start.Before(start)) {
			start = res.Start
		}
	}
	var edges []edge
	for _, res := range results {
		if !res.Success {
			r.Failed++
			r.Errors = append(r.Errors, res.Err)
			continue
		}
		r.Completed++
		r.TotalInputTokens += res.PromptTokens
		r.TotalOutputTokens += res.OutputTokens
		r.InputLens = append(r.InputLens, res.PromptTokens)
		r.OutputLens = append(r.OutputLens, res.OutputTokens)
		r.TTFTs = append(r.TTFTs, res.TTFT.Seconds())
		r.StartTimes = append(r.StartTimes, res.Start.Sub(start).Seconds())
		r.GeneratedTexts = append(r.GeneratedTexts, res.Text)
		r.Errors = append(r.Errors, "")
		itl := make([]float64, len(res.ITL))
		for j, d := range res.ITL {
			itl[j] = d.Seconds()
			itls = append(itls, ms(d))
		}
		r.ITLs = append(r.ITLs, itl)
		ttfts = append(ttfts, ms(res.TTFT))
		e2els = append(e2els, ms(res.Latency))
		if res.OutputTokens > 1 {
			tpots = append(tpots, ms(res.Latency-res.TTFT)/float64(res.OutputTokens-1))
		}
		edges = append(edges, edge{res.Start, 1}, edge{res.Start.Add(res.Latency), -1})
	}
	if dur > 0 {
		r.RequestThroughput = float64(r.Completed) / dur.Seconds()
		r.OutputThroughput = float64(r.TotalOutputTokens) / dur.Seconds()
		r.TotalTokenThroughput = float64(r.TotalInputTokens+r.TotalOutputTokens) / dur.Seconds()
	}
	r.MaxConcurrentRequests = peakConcurrency(edges)
	r.MaxOutputTokensPerS = peakOutputRate(results, start)
	r.TTFT = summarize(ttfts, cfg.Percentiles)
	r.TPOT = summarize(tpots, cfg.Percentiles)
	r.ITL = summarize(itls, cfg.Percentiles)
	r.E2EL = summarize(e2els, cfg.Percentiles)
	return r
}

// edge is a request starting (+1) or ending (−1).
type edge struct {
	t     time.Time
	delta int
}

// peakConcurrency is the most requests in flight at once.
func peakConcurrency(edges []edge) int {
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a start at the same instant
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

// peakOutputRate is the most output tokens received in any one-second
// bucket since start (each content chunk carries outputTokens/chunks).
func peakOutputRate(results []requestResult, start time.Time) float64 {
	buckets := map[int64]float64{}
	for _, res := range results {
		if !res.Success {
			continue
		}
		chunks := 1 + len(res.ITL)
		per := float64(res.OutputTokens) / float64(chunks)
		t := res.Start.Add(res.TTFT)
		buckets[int64(t.Sub(start)/time.Second)] += per
		for _, d := range res.ITL {
			t = t.Add(d)
			buckets[int64(t.Sub(start)/time.Second)] += per
		}
	}
	peak := 0.0
	for _, v := range buckets {
		peak = max(peak, v)
	}
	return peak
}
