package bench

import (
	"math"
	"slices"
	"time"
)

// Result is the benchmark's outcome; JSON field names are vLLM's. The
// per-request lists have one entry per measured request in prompt order,
// failed ones included (zeros and their error), as vLLM's.
type Result struct {
	Date                  string      `json:"date"`
	EndpointType          string      `json:"endpoint_type"`
	Backend               string      `json:"backend"`
	Label                 *string     `json:"label"`
	ModelID               string      `json:"model_id"`
	TokenizerID           string      `json:"tokenizer_id"`
	Endpoint              string      `json:"endpoint"`
	NumPrompts            int         `json:"num_prompts"`
	RequestRate           any         `json:"request_rate"` // number or "inf"
	Burstiness            float64     `json:"burstiness"`
	MaxConcurrency        *int        `json:"max_concurrency"`
	RampUpStrategy        string      `json:"ramp_up_strategy,omitempty"`
	RampUpStartRPS        *float64    `json:"ramp_up_start_rps,omitempty"`
	RampUpEndRPS          *float64    `json:"ramp_up_end_rps,omitempty"`
	Duration              float64     `json:"duration"`
	Completed             int         `json:"completed"`
	Failed                int         `json:"failed"`
	TotalInputTokens      int         `json:"total_input_tokens"`
	TotalOutputTokens     int         `json:"total_output_tokens"`
	RequestThroughput     float64     `json:"request_throughput"`
	RequestGoodput        *float64    `json:"request_goodput"` // null without --goodput
	OutputThroughput      float64     `json:"output_throughput"`
	TotalTokenThroughput  float64     `json:"total_token_throughput"`
	InputLens             []int       `json:"input_lens"`
	OutputLens            []int       `json:"output_lens"`
	TTFTs                 []float64   `json:"ttfts"` // seconds
	ITLs                  [][]float64 `json:"itls"`  // seconds
	Latencies             []float64   `json:"latencies"`
	StartTimes            []float64   `json:"start_times"` // seconds since the run began
	QueueTimes            []float64   `json:"queue_times"` // seconds waiting for --max-concurrency
	GeneratedTexts        []string    `json:"generated_texts"`
	Errors                []string    `json:"errors"`
	MaxOutputTokensPerS   float64     `json:"max_output_tokens_per_s"`
	MaxConcurrentRequests int         `json:"max_concurrent_requests"`
	RTFx                  float64     `json:"rtfx"` // vLLM's audio figure: always 0 here

	// The statistics of each metric (ms); those of PercentileMetrics are
	// printed and saved. QueueTime and E2ELQueue exist with
	// --max-concurrency (E2ELQueue also needs a finite rate).
	TTFT, TPOT, ITL, E2EL Summary            `json:"-"`
	QueueTime, E2ELQueue  *Summary           `json:"-"`
	Checks                []Check            `json:"metrics_check,omitempty"`
	CheckError            string             `json:"metrics_check_error,omitempty"` // why there is no cross-check
	Percentiles           []float64          `json:"-"`
	PercentileMetrics     []string           `json:"-"`
	Goodput               map[string]float64 `json:"-"`
	// Detailed keeps the per-request lists in the JSON (vLLM's
	// --save-detailed); Metadata adds KEY=VALUE pairs (--metadata).
	Detailed bool              `json:"-"`
	Metadata map[string]string `json:"-"`

	// With Config.ScrapeInterval: the latency of each /metrics scrape
	// during the run (ms; govllm's own fields, not vLLM's), their summary
	// (nil when no scrape succeeded), and the failed scrapes' errors.
	ScrapeLatencies []float64 `json:"metrics_scrape_latencies_ms,omitempty"`
	ScrapeErrors    []string  `json:"metrics_scrape_errors,omitempty"`
	Scrape          *Summary  `json:"-"`
}

// newResult fills the run's settings.
func newResult(cfg *Config, n int, dur time.Duration) *Result {
	r := &Result{
		Date: time.Now().Format("20060102-150405"), EndpointType: cfg.Backend, Backend: cfg.Backend,
		ModelID: cfg.Model, TokenizerID: cfg.Model, Endpoint: cfg.Endpoint, NumPrompts: n,
		Burstiness: cfg.Burstiness, Duration: dur.Seconds(), Percentiles: cfg.Percentiles,
		PercentileMetrics: cfg.PercentileMetrics, Goodput: cfg.Goodput, RampUpStrategy: cfg.RampUpStrategy,
	}
	if cfg.ModelID != "" {
		r.ModelID, r.TokenizerID = cfg.ModelID, cfg.ModelID
	}
	if cfg.Label != "" {
		r.Label = &cfg.Label
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
	if cfg.RampUpStrategy != "" {
		r.RampUpStartRPS, r.RampUpEndRPS = &cfg.RampUpStartRPS, &cfg.RampUpEndRPS
	}
	return r
}

// series are the latency samples of the successful requests (ms).
type series struct {
	ttft, tpot, allTPOT, itl, e2el, queue, e2elQueue []float64
}

// summarizeRun computes throughput and latency statistics (vLLM's
// calculate_metrics).
func summarizeRun(cfg *Config, prompts []Prompt, results []requestResult, dur time.Duration) *Result {
	r := newResult(cfg, len(prompts), dur)
	var s series
	start := time.Time{}
	for _, res := range results {
		if !res.Start.IsZero() && (start.IsZero() || res.Start.Before(start)) {
			start = res.Start
		}
	}
	var edges []edge
	for i, res := range results {
		r.addRequest(&prompts[i], &res, start)
		if res.Success {
			s.add(&res)
			edges = append(edges, edge{res.Start, 1}, edge{res.Start.Add(res.Latency), -1})
		}
	}
	if dur > 0 {
		r.RequestThroughput = float64(r.Completed) / dur.Seconds()
		r.OutputThroughput = float64(r.TotalOutputTokens) / dur.Seconds()
		r.TotalTokenThroughput = float64(r.TotalInputTokens+r.TotalOutputTokens) / dur.Seconds()
	}
	if len(cfg.Goodput) > 0 && dur > 0 {
		g := float64(s.good(cfg.Goodput)) / dur.Seconds()
		r.RequestGoodput = &g
	}
	r.MaxConcurrentRequests = peakConcurrency(edges)
	r.MaxOutputTokensPerS = peakOutputRate(results, start)
	r.TTFT = summarize(s.ttft, cfg.Percentiles)
	r.TPOT = summarize(s.tpot, cfg.Percentiles)
	r.ITL = summarize(s.itl, cfg.Percentiles)
	r.E2EL = summarize(s.e2el, cfg.Percentiles)
	if cfg.MaxConcurrency > 0 {
		q := summarize(s.queue, cfg.Percentiles)
		r.QueueTime = &q
		if !math.IsInf(cfg.RequestRate, 1) {
			e := summarize(s.e2elQueue, cfg.Percentiles)
			r.E2ELQueue = &e
		}
	}
	return r
}

// addRequest appends one request to the per-request lists and totals.
func (r *Result) addRequest(p *Prompt, res *requestResult, start time.Time) {
	itl := make([]float64, len(res.ITL))
	for j, d := range res.ITL {
		itl[j] = d.Seconds()
	}
	in, out := p.InputLen, 0
	if res.Success {
		r.Completed++
		in, out = res.PromptTokens, res.OutputTokens
		r.TotalInputTokens += in
		r.TotalOutputTokens += out
	} else {
		r.Failed++
	}
	r.InputLens = append(r.InputLens, in)
	r.OutputLens = append(r.OutputLens, out)
	r.TTFTs = append(r.TTFTs, res.TTFT.Seconds())
	r.ITLs = append(r.ITLs, itl)
	r.Latencies = append(r.Latencies, res.Latency.Seconds())
	r.StartTimes = append(r.StartTimes, max(0, res.Start.Sub(start).Seconds()))
	r.QueueTimes = append(r.QueueTimes, res.Queue.Seconds())
	r.GeneratedTexts = append(r.GeneratedTexts, res.Text)
	r.Errors = append(r.Errors, res.Err)
}

// add appends a successful request's samples.
func (s *series) add(res *requestResult) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, d := range res.ITL {
		s.itl = append(s.itl, ms(d))
	}
	s.ttft = append(s.ttft, ms(res.TTFT))
	s.e2el = append(s.e2el, ms(res.Latency))
	s.queue = append(s.queue, ms(res.Queue))
	s.e2elQueue = append(s.e2elQueue, ms(res.Latency+res.Queue))
	tpot := 0.0 // a request of one token has TPOT 0 for goodput, as in vLLM
	if res.OutputTokens > 1 {
		tpot = ms(res.Latency-res.TTFT) / float64(res.OutputTokens-1)
		s.tpot = append(s.tpot, tpot)
	}
	s.allTPOT = append(s.allTPOT, tpot)
}

// good counts the requests meeting every service-level objective (ms).
func (s *series) good(slo map[string]float64) int {
	n := 0
	for i := range s.ttft {
		if s.ttft[i] <= sloOr(slo, "ttft") && s.allTPOT[i] <= sloOr(slo, "tpot") && s.e2el[i] <= sloOr(slo, "e2el") {
			n++
		}
	}
	return n
}

// sloOr is slo[k], or +Inf when k has no objective.
func sloOr(slo map[string]float64, k string) float64 {
	if v, ok := slo[k]; ok {
		return v
	}
	return math.Inf(1)
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
