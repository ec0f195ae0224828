package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Config is one benchmark run. Field names follow vLLM's flags.
type Config struct {
	Backend          string // vllm, openai or openai-chat: the result's backend ("" = openai)
	Label            string // the result's label (vLLM's --label)
	BaseURL          string // e.g. http://127.0.0.1:8000
	Endpoint         string // /v1/completions or /v1/chat/completions
	Model            string // model name sent in requests; "" → first of GET /v1/models
	ModelID          string // the result's model_id when it differs from Model (vLLM's --model with --served-model-name)
	APIKey           string
	Headers          map[string]string // extra request headers (vLLM's --header)
	DatasetName      string            // random (""), sharegpt or custom
	DatasetPath      string            // the ShareGPT JSON or the custom JSONL
	OutputLen        int               // sharegpt/custom: max_tokens of every request (0 = ShareGPT's completion length)
	DisableShuffle   bool              // sharegpt: keep the file's order
	NoOversample     bool              // sharegpt/custom: fewer requests when the file has fewer prompts
	SkipChatTemplate bool              // custom on /v1/completions: send the prompts raw
	NumPrompts       int
	RandomInputLen   int
	RandomOutputLen  int
	RandomPrefixLen  int // a prefix shared by every random prompt, in tokens
	// The prefix_repetition dataset: NumPrefixes prefixes of PrefixLen
	// tokens, each followed by random suffixes of SuffixLen tokens.
	PrefixLen, SuffixLen, NumPrefixes int
	RandomRangeRatio                  float64 // lengths uniform in len·[1−r, 1+r]
	RequestRate                       float64 // requests/s; +Inf sends all at once
	Burstiness                        float64 // gamma shape; 1 = Poisson
	RampUpStrategy                    string  // "", linear or exponential
	RampUpStartRPS                    float64
	RampUpEndRPS                      float64
	MaxConcurrency                    int // 0 = unlimited
	IgnoreEOS                         bool
	Seed                              int64
	Warmup                            int            // warm-up requests before the measured run
	ReadyCheck                        time.Duration  // > 0: retry the first request until it succeeds, up to this long
	ExtraBody                         map[string]any // merged into every request body (sampling parameters, --extra-body)
	RequestIDPrefix                   string         // X-Request-Id of request i is prefix+i ("" = none sent)
	// PercentileMetrics selects the statistics reported: ttft, tpot, itl,
	// e2el, client_queue_time, e2el_including_client_queue (default
	// ttft, tpot, itl, as vLLM's).
	PercentileMetrics []string
	Percentiles       []float64          // e.g. 99 (the default), or 50, 90, 99
	Goodput           map[string]float64 // SLOs in ms by ttft, tpot, e2el; a request meeting all is good
	Tolerance         float64            // relative tolerance of the latency cross-check
	Tokenize          bool               // build exact-length prompts with the server's /tokenize
	CheckMetrics      bool               // scrape /metrics before and after
	MetricsURLs       []string           // the /metrics to sum for the cross-check (default BaseURL/metrics): every replica behind a balancer
	ScrapeInterval    time.Duration      // > 0: also time a scrape of /metrics this often during the run
	Progress          io.Writer          // progress bar or lines; nil = quiet
	ProgressIsTTY     bool
	HTTPClient        *http.Client
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
	case c.RandomPrefixLen < 0:
		return fmt.Errorf("--random-prefix-len must be non-negative, got %d", c.RandomPrefixLen)
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
	for _, m := range c.PercentileMetrics {
		if !slices.Contains(percentileMetrics, m) {
			return fmt.Errorf("--percentile-metrics: unknown metric %q (allowed: %s)", m, strings.Join(percentileMetrics, ", "))
		}
	}
	for k, v := range c.Goodput {
		if !slices.Contains([]string{"ttft", "tpot", "e2el"}, k) || v < 0 {
			return fmt.Errorf("--goodput %s:%g: the objective must be one of ttft, tpot, e2el with a value ≥ 0 (ms)", k, v)
		}
	}
	if err := c.validateDataset(); err != nil {
		return err
	}
	return c.validateRampUp()
}

// percentileMetrics are the names --percentile-metrics accepts (vLLM's).
var percentileMetrics = []string{"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"}

// validateDataset checks the dataset flags as vLLM does.
func (c *Config) validateDataset() error {
	switch c.DatasetName {
	case "", "random", "prefix_repetition":
		if c.DatasetPath != "" {
			return fmt.Errorf("cannot use the %s dataset with --dataset-path %s: use --dataset-name sharegpt or custom", cmp.Or(c.DatasetName, "random"), c.DatasetPath)
		}
		if c.DatasetName == "prefix_repetition" && (c.PrefixLen < 1 || c.SuffixLen < 0 || c.NumPrefixes < 1 || c.OutputLen < 1 || c.NumPrompts < c.NumPrefixes) {
			return fmt.Errorf("prefix_repetition: want prefix length ≥ 1, suffix length ≥ 0, output length ≥ 1 and --num-prompts (%d) ≥ --prefix-repetition-num-prefixes (%d)", c.NumPrompts, c.NumPrefixes)
		}
	case "sharegpt", "custom":
		if c.DatasetPath == "" {
			return fmt.Errorf("--dataset-name %s needs --dataset-path", c.DatasetName)
		}
		if c.OutputLen < 0 || c.DatasetName == "custom" && c.OutputLen < 1 {
			return fmt.Errorf("the output length of the %s dataset must be at least 1, got %d", c.DatasetName, c.OutputLen)
		}
	default:
		return fmt.Errorf("--dataset-name %q is not available here (random, sharegpt, custom or prefix_repetition)", c.DatasetName)
	}
	return nil
}

// validateRampUp checks the ramp-up flags as vLLM does.
func (c *Config) validateRampUp() error {
	switch c.RampUpStrategy {
	case "":
		return nil
	case "linear", "exponential":
	default:
		return fmt.Errorf("--ramp-up-strategy must be linear or exponential, got %q", c.RampUpStrategy)
	}
	switch {
	case !math.IsInf(c.RequestRate, 1):
		return errors.New("with --ramp-up-strategy, do not give --request-rate: the ramp-up sets the rate")
	case c.RampUpStartRPS < 0 || c.RampUpEndRPS <= 0:
		return errors.New("--ramp-up-start-rps must be ≥ 0 and --ramp-up-end-rps > 0")
	case c.RampUpStartRPS > c.RampUpEndRPS:
		return errors.New("--ramp-up-start-rps must not exceed --ramp-up-end-rps")
	case c.RampUpStrategy == "exponential" && c.RampUpStartRPS == 0:
		return errors.New("an exponential ramp-up cannot start at 0 RPS")
	}
	return nil
}

// Run executes the benchmark.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Percentiles) == 0 {
		cfg.Percentiles = []float64{99}
	}
	if len(cfg.PercentileMetrics) == 0 {
		cfg.PercentileMetrics = []string{"ttft", "tpot", "itl"}
	}
	if cfg.Backend == "" {
		cfg.Backend = "openai"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := &http.Transport{MaxIdleConnsPerHost: 1024}
		defer tr.CloseIdleConnections() // no keep-alive goroutines outlive the run
		hc = &http.Client{Transport: tr}
	}
	c := &client{http: hc, baseURL: strings.TrimRight(cfg.BaseURL, "/"), apiKey: cfg.APIKey, headers: cfg.Headers}
	prompts, err := prepare(ctx, c, &cfg)
	if err != nil {
		return nil, err
	}
	return measure(ctx, c, &cfg, prompts)
}

// prepare finds the model, builds the prompts, waits for the server when
// asked to and sends the warm-up requests; it returns the measured prompts.
func prepare(ctx context.Context, c *client, cfg *Config) ([]Prompt, error) {
	if cfg.Model == "" {
		m, err := c.firstModel(ctx)
		if err != nil {
			return nil, fmt.Errorf("finding the served model: %w", err)
		}
		cfg.Model = m
	}
	var tok tokenizeFunc
	if cfg.Tokenize || cfg.DatasetName == "sharegpt" || cfg.DatasetName == "custom" {
		tok = func(ctx context.Context, text string, special bool) ([]int32, error) {
			return c.tokenize(ctx, cfg.Model, text, special)
		}
	}
	prompts, err := makeDataset(ctx, cfg, tok)
	if err != nil {
		return nil, fmt.Errorf("building the %s dataset: %w", cmp.Or(cfg.DatasetName, "random"), err)
	}
	if cfg.ReadyCheck > 0 {
		if err := c.waitReady(ctx, cfg, &prompts[0]); err != nil {
			return nil, err
		}
	}
	warm, prompts := prompts[:cfg.Warmup], prompts[cfg.Warmup:]
	for i := range warm {
		if r := c.send(ctx, cfg, &warm[i]); !r.Success {
			return nil, fmt.Errorf("warm-up request failed: %s", r.Err)
		}
	}
	return prompts, nil
}

// waitReady sends p until it succeeds or cfg.ReadyCheck has passed (vLLM's
// --ready-check-timeout-sec).
func (c *client) waitReady(ctx context.Context, cfg *Config, p *Prompt) error {
	deadline := time.Now().Add(cfg.ReadyCheck)
	for {
		r := c.send(ctx, cfg, p)
		if r.Success {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the server was not ready within %v: %s", cfg.ReadyCheck, r.Err)
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
}

// measure runs the measured prompts, with the /metrics scrapes around and
// during the run, and summarizes.
func measure(ctx context.Context, c *client, cfg *Config, prompts []Prompt) (*Result, error) {
	var before serverFigures
	var err error
	if cfg.CheckMetrics {
		if before, err = c.scrapeAll(ctx, cfg); err != nil {
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
	results, dur := runAll(ctx, c, cfg, prompts)
	close(stop)
	<-scraped
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := summarizeRun(cfg, prompts, results, dur)
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
		// A server gone by now (a replica drained during the run) leaves
		// the cross-check undone, not the benchmark.
		if after, err := c.scrapeAll(ctx, cfg); err != nil {
			res.CheckError = fmt.Sprintf("scraping /metrics after the run: %v", err)
		} else {
			res.Checks = crossCheck(res, after.sub(before), cfg.Tolerance)
		}
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
