package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	dto "github.com/prometheus/client_model/go"

	"govllm/internal/core"
	"govllm/internal/sched"
	"govllm/internal/testmodels"
)

// The async gate: the real server (serve on a loopback listener, the real
// stories260K model, prefix caching on) driven over HTTP by real clients,
// with /metrics scraped before, between and after the phases and checked
// against docs/metrics.md (decisions and invariants). Every expectation is derived
// from the requests sent.

const (
	gateModel  = "stories260k"
	completion = "/v1/completions"
	chatPath   = "/v1/chat/completions"
)

// The core catalog (docs/metrics.md, Catalog): exposed name, type,
// and the extra label with its eagerly created values.
var gateCatalog = []struct {
	name   string
	typ    dto.MetricType
	label  string
	values []string
}{
	{"vllm:num_requests_running", dto.MetricType_GAUGE, "", nil},
	{"vllm:num_requests_waiting", dto.MetricType_GAUGE, "", nil},
	{"vllm:num_requests_waiting_by_reason", dto.MetricType_GAUGE, "reason", []string{"capacity", "deferred"}},
	{"vllm:engine_sleep_state", dto.MetricType_GAUGE, "sleep_state", []string{"awake", "weights_offloaded", "discard_all"}},
	{"vllm:kv_cache_usage_perc", dto.MetricType_GAUGE, "", nil},
	{"vllm:prefix_cache_queries_total", dto.MetricType_COUNTER, "", nil},
	{"vllm:prefix_cache_hits_total", dto.MetricType_COUNTER, "", nil},
	{"vllm:num_preemptions_total", dto.MetricType_COUNTER, "", nil},
	{"vllm:prompt_tokens_total", dto.MetricType_COUNTER, "", nil},
	{"vllm:prompt_tokens_by_source_total", dto.MetricType_COUNTER, "source", []string{"local_compute", "local_cache_hit", "external_kv_transfer"}},
	{"vllm:prompt_tokens_cached_total", dto.MetricType_COUNTER, "", nil},
	{"vllm:generation_tokens_total", dto.MetricType_COUNTER, "", nil},
	{"vllm:request_success_total", dto.MetricType_COUNTER, "finished_reason", finishReasons},
	{"vllm:request_prompt_tokens", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_generation_tokens", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:iteration_tokens_total", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_max_num_generation_tokens", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_params_n", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_params_max_tokens", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:time_to_first_token_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:inter_token_latency_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_time_per_output_token_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:e2e_request_latency_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_queue_time_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_inference_time_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_prefill_time_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_decode_time_seconds", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:request_prefill_kv_computed_tokens", dto.MetricType_HISTOGRAM, "", nil},
	{"vllm:cache_config_info", dto.MetricType_GAUGE, "", nil},
}

var finishReasons = []string{"stop", "length", "abort", "error", "repetition"}

// Histograms observed once per finished request only when it was not
// cancelled by its client (docs/metrics.md, decision 6).
var latencyHistograms = []string{
	"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
	"vllm:request_decode_time_seconds", "vllm:request_inference_time_seconds", "vllm:request_time_per_output_token_seconds",
}

// gate is one server under test and its clients.
type gate struct {
	url  string
	hc   *http.Client
	api  sdk.Client
	sc   *scraper
	slow *pacedExecutor // paces the engine's steps when a phase asks
}

// pacedExecutor sleeps before each step while its pace is set: a phase
// whose long streams must outlast its other requests on a busy machine
// sets it, so that the long streams' hundreds of steps take far longer than
// the dozen steps of the others, however slow the clients are scheduled.
type pacedExecutor struct {
	core.Executor
	pace atomic.Int64 // nanoseconds per step
}

func (p *pacedExecutor) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	if d := time.Duration(p.pace.Load()); d > 0 {
		time.Sleep(d)
	}
	return p.Executor.Execute(ctx, so)
}

func newGate(t *testing.T, cfg serveConfig) *gate {
	t.Helper()
	slow := &pacedExecutor{}
	cfg.wrapExecutor = func(e core.Executor) core.Executor { slow.Executor = e; return slow }
	url, stop := startServe(t, cfg)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve returned %v after shutdown", err)
		}
		hc.CloseIdleConnections()
	})
	return &gate{
		url: url, hc: hc, slow: slow,
		api: sdk.NewClient(option.WithBaseURL(url+"/v1/"), option.WithHTTPClient(hc), option.WithMaxRetries(0), option.WithAPIKey("unused")),
		sc:  &scraper{url: url, hc: hc},
	}
}

func gateConfig(t *testing.T) serveConfig {
	cfg := testServeConfig()
	cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	cfg.ServedModelNames = []string{gateModel}
	cfg.EnablePrefixCaching = true
	cfg.MaxModelLen = 512
	cfg.LogStatsInterval = time.Hour
	return cfg
}

// tokens is a deterministic token-id prompt of length n (ids of ordinary
// vocabulary pieces, no BOS/EOS).
func tokens(seed, n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(259 + (seed*97+i*31)%253)
	}
	return ids
}

// tally is what the clients of one phase saw (safe for concurrent use).
type tally struct {
	mu        sync.Mutex
	requests  int            // requests that reached the engine
	finished  int            // … and finished (not cancelled by the client)
	aborted   int            // … cancelled by their client after the first chunk
	prompt    int            // Σ prompt tokens of every request
	gen       int            // Σ completion tokens of the finished ones
	maxTokens int            // Σ max_tokens of every request
	parents   int            // user requests (a request with n > 1 has n sequences above)
	nSum      int            // Σ n over user requests
	maxGen    int            // Σ over finished user requests of their longest sequence
	clientSec float64        // Σ over finished sequences of the client-measured request time
	reasons   map[string]int // finish reasons the finished requests reported
	calls     map[string]int // POSTs per handler answered 2xx
	rejected  map[string]int // POSTs per handler answered 4xx
	errs      []error
}

func newTally() *tally {
	return &tally{reasons: map[string]int{}, calls: map[string]int{}, rejected: map[string]int{}}
}

func (y *tally) finish(handler string, prompt, gen, maxTokens int, reason string, took time.Duration) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.clientSec += took.Seconds()
	y.requests++
	y.finished++
	y.prompt += prompt
	y.gen += gen
	y.maxTokens += maxTokens
	y.reasons[reason]++
	y.calls[handler]++
	y.parents++
	y.nSum++
	y.maxGen += gen
}

// finishParallel records a finished request with n sequences, gens[i]
// tokens and finish reasons[i] each, over a prompt of promptLen tokens.
func (y *tally) finishParallel(handler string, promptLen, maxTokens int, gens []int, reasons []string, took time.Duration) {
	y.mu.Lock()
	defer y.mu.Unlock()
	n := len(gens)
	y.clientSec += float64(n) * took.Seconds()
	y.requests += n
	y.finished += n
	y.prompt += n * promptLen // each sequence is an engine request with its own prefill
	y.maxTokens += n * maxTokens
	for i := range gens {
		y.gen += gens[i]
		y.reasons[reasons[i]]++
	}
	y.calls[handler]++
	y.parents++
	y.nSum += n
	y.maxGen += slices.Max(gens)
}

// abort records a request its client cancelled once it ran: a stream
// (answered 200 before the client left, so counted as 2xx) or not (the
// handler gives up with 499, counted as 4xx).
func (y *tally) abort(handler string, prompt, maxTokens int, streamed bool) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.requests++
	y.aborted++
	y.prompt += prompt
	y.maxTokens += maxTokens
	if streamed {
		y.calls[handler]++
	} else {
		y.rejected[handler]++
	}
	y.parents++
	y.nSum++
}

func (y *tally) fail(err error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.errs = append(y.errs, err)
}

// complete is a non-streaming completion of a token-id prompt, forced to
// max tokens (ignore_eos, greedy).
func (g *gate) complete(ctx context.Context, y *tally, prompt []int64, max int) string {
	start := time.Now()
	c, err := g.api.Completions.New(ctx, sdk.CompletionNewParams{
		Model:  gateModel,
		Prompt: sdk.CompletionNewParamsPromptUnion{OfArrayOfTokens: prompt}, MaxTokens: sdk.Int(int64(max)), Temperature: sdk.Float(0),
	}, option.WithJSONSet("ignore_eos", true))
	if err != nil {
		y.fail(fmt.Errorf("completion: %w", err))
		return ""
	}
	if len(c.Choices) != 1 || c.Usage.PromptTokens != int64(len(prompt)) || c.Usage.CompletionTokens != int64(max) || c.Choices[0].FinishReason != "length" {
		y.fail(fmt.Errorf("completion: usage %+v, %d choices, finish %q; want %d prompt and %d completion tokens, length",
			c.Usage, len(c.Choices), c.Choices[0].FinishReason, len(prompt), max))
	}
	y.finish(completion, int(c.Usage.PromptTokens), int(c.Usage.CompletionTokens), max, string(c.Choices[0].FinishReason), time.Since(start))
	return c.Choices[0].Text
}

// streamComplete is a streaming completion with usage in the last chunk.
func (g *gate) streamComplete(ctx context.Context, y *tally, prompt []int64, max int) string {
	start := time.Now()
	s := g.api.Completions.NewStreaming(ctx, sdk.CompletionNewParams{
		Model:  gateModel,
		Prompt: sdk.CompletionNewParamsPromptUnion{OfArrayOfTokens: prompt}, MaxTokens: sdk.Int(int64(max)), Temperature: sdk.Float(0),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}, option.WithJSONSet("ignore_eos", true))
	defer s.Close()
	var text, reason string
	var usage sdk.CompletionUsage
	for s.Next() {
		ch := s.Current()
		for _, c := range ch.Choices {
			text += c.Text
			if c.FinishReason != "" {
				reason = string(c.FinishReason)
			}
		}
		if ch.Usage.TotalTokens > 0 {
			usage = ch.Usage
		}
	}
	if err := s.Err(); err != nil {
		y.fail(fmt.Errorf("streaming completion: %w", err))
		return ""
	}
	if usage.PromptTokens != int64(len(prompt)) || usage.CompletionTokens != int64(max) || reason != "length" {
		y.fail(fmt.Errorf("streaming completion: usage %+v, finish %q", usage, reason))
	}
	y.finish(completion, int(usage.PromptTokens), int(usage.CompletionTokens), max, reason, time.Since(start))
	return text
}

// chat is a chat completion (streaming or not) forced to max tokens.
func (g *gate) chat(ctx context.Context, y *tally, msg string, max int, stream bool) {
	start := time.Now()
	p := sdk.ChatCompletionNewParams{
		Model: gateModel, Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage(msg)},
		MaxCompletionTokens: sdk.Int(int64(max)), Temperature: sdk.Float(0),
	}
	ignore := option.WithJSONSet("ignore_eos", true)
	var usage sdk.CompletionUsage
	var reason string
	if stream {
		p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
		s := g.api.Chat.Completions.NewStreaming(ctx, p, ignore)
		defer s.Close()
		for s.Next() {
			ch := s.Current()
			for _, c := range ch.Choices {
				if c.FinishReason != "" {
					reason = c.FinishReason
				}
			}
			if ch.Usage.TotalTokens > 0 {
				usage = ch.Usage
			}
		}
		if err := s.Err(); err != nil {
			y.fail(fmt.Errorf("streaming chat: %w", err))
			return
		}
	} else {
		c, err := g.api.Chat.Completions.New(ctx, p, ignore)
		if err != nil {
			y.fail(fmt.Errorf("chat: %w", err))
			return
		}
		usage = c.Usage
		if len(c.Choices) == 1 {
			reason = string(c.Choices[0].FinishReason)
		}
	}
	if usage.PromptTokens <= 0 || usage.CompletionTokens != int64(max) || reason != "length" {
		y.fail(fmt.Errorf("chat (stream %v): usage %+v, finish %q", stream, usage, reason))
	}
	y.finish(chatPath, int(usage.PromptTokens), int(usage.CompletionTokens), max, reason, time.Since(start))
}

// openStream starts a streaming completion over plain net/http and returns
// once its first chunk arrived; cancel disconnects the client.
func (g *gate) openStream(t testing.TB, y *tally, prompt []int64, max int) (cancel func()) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"model": gateModel, "prompt": prompt, "max_tokens": max, "ignore_eos": true, "stream": true, "temperature": 0,
	})
	ctx, cancelCtx := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", g.url+completion, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.hc.Do(req)
	if err != nil {
		cancelCtx()
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: {") || strings.Contains(line, `"finish_reason":"`) {
		cancelCtx()
		resp.Body.Close()
		t.Fatalf("first chunk %q, %v", line, err)
	}
	return func() {
		cancelCtx()
		resp.Body.Close()
		y.abort(completion, len(prompt), max, true)
	}
}

// reject posts a request the server must refuse with status, in OpenAI's
// error envelope, before it reaches the engine.
func (g *gate) reject(y *tally, handler, body string, status int) {
	resp, err := g.hc.Post(g.url+handler, "application/json", strings.NewReader(body))
	if err != nil {
		y.fail(err)
		return
	}
	defer resp.Body.Close()
	var env struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || resp.StatusCode != status || env.Error == nil || env.Error.Message == "" {
		y.fail(fmt.Errorf("POST %s %s: status %d (want %d), envelope %+v, %v", handler, body, resp.StatusCode, status, env.Error, err))
	}
	y.mu.Lock()
	y.rejected[handler]++
	y.mu.Unlock()
}

// phaseChecks are the expectations every phase meets, from what its
// clients saw: d is the change over the phase (every request of the phase
// started and ended in it).
func phaseChecks(d delta, y *tally, preempts bool) []check {
	req, fin, ab := float64(y.requests), float64(y.finished), float64(y.aborted)
	prompt, gen := d.c("vllm:prompt_tokens_total"), d.c("vllm:generation_tokens_total")
	cached := d.c("vllm:prompt_tokens_cached_total")
	cs := []check{
		eq("prompt_tokens_total", prompt, float64(y.prompt)),
		eq("prompt_tokens_by_source sums to prompt_tokens_total", d.c("vllm:prompt_tokens_by_source_total"), prompt),
		eq("prompt_tokens_by_source{local_cache_hit} == prompt_tokens_cached_total", d.c("vllm:prompt_tokens_by_source_total", "source", "local_cache_hit"), cached),
		eq("prompt_tokens_by_source{external_kv_transfer}", d.c("vllm:prompt_tokens_by_source_total", "source", "external_kv_transfer"), 0),
		eq("request_prompt_tokens_sum", d.s("vllm:request_prompt_tokens"), prompt),
		eq("request_generation_tokens_sum == generation_tokens_total", d.s("vllm:request_generation_tokens"), gen),
		eq("request_prefill_kv_computed_tokens_sum == prompt − cached", d.s("vllm:request_prefill_kv_computed_tokens"), prompt-cached),
		eq("iteration_tokens_total_sum == prompt + generation", d.s("vllm:iteration_tokens_total"), prompt+gen),
		eq("request_params_max_tokens_sum", d.s("vllm:request_params_max_tokens"), float64(y.maxTokens)),
		eq("request_params_n_sum == Σ n", d.s("vllm:request_params_n"), float64(y.nSum)),
		eq("request_params_n_count == user requests", d.n("vllm:request_params_n"), float64(y.parents)),
		eq("request_max_num_generation_tokens_count == user requests", d.n("vllm:request_max_num_generation_tokens"), float64(y.parents)),
		eq("time_to_first_token_seconds_count (every request had a first token)", d.n("vllm:time_to_first_token_seconds"), req),
		ge("inter_token_latency_seconds_count ≥ generation − requests", d.n("vllm:inter_token_latency_seconds"), gen-req),
		le("inter_token_latency_seconds_count ≤ generation − requests + aborted", d.n("vllm:inter_token_latency_seconds"), gen-req+ab),
		approx("request_inference_time_seconds_sum == prefill + decode", d.s("vllm:request_inference_time_seconds"),
			d.s("vllm:request_prefill_time_seconds")+d.s("vllm:request_decode_time_seconds")),
		// The server's interval lies inside the client's: it starts when
		// the request arrives and ends before the reply is sent.
		le("e2e_request_latency_seconds_sum ≤ Σ client-measured request time", d.s("vllm:e2e_request_latency_seconds"), y.clientSec),
		ge("e2e_request_latency_seconds_sum ≥ queue + inference", d.s("vllm:e2e_request_latency_seconds")+1e-6*fin,
			d.s("vllm:request_queue_time_seconds")+d.s("vllm:request_inference_time_seconds")),
	}
	if preempts {
		cs = append(cs, gt("num_preemptions_total", d.c("vllm:num_preemptions_total"), 0))
	} else {
		cs = append(cs, eq("num_preemptions_total", d.c("vllm:num_preemptions_total"), 0),
			eq("prefix_cache_hits_total == prompt_tokens_cached_total (no preemption)", d.c("vllm:prefix_cache_hits_total"), cached))
	}
	for _, h := range []string{"vllm:request_prompt_tokens", "vllm:request_generation_tokens", "vllm:request_prefill_kv_computed_tokens",
		"vllm:request_params_max_tokens"} {
		cs = append(cs, eq(h+"_count (aborts included)", d.n(h), req))
	}
	positive := func(what string, v, count float64) check { // a sum of count positive intervals
		if count == 0 {
			return eq(what, v, 0)
		}
		return gt(what, v, 0)
	}
	cs = append(cs, positive("time_to_first_token_seconds_sum", d.s("vllm:time_to_first_token_seconds"), req))
	for _, h := range latencyHistograms {
		cs = append(cs, eq(h+"_count (client aborts excluded)", d.n(h), fin), positive(h+"_sum", d.s(h), fin))
	}
	if ab == 0 {
		cs = append(cs,
			eq("request_max_num_generation_tokens_sum == Σ longest sequence", d.s("vllm:request_max_num_generation_tokens"), float64(y.maxGen)),
			eq("generation_tokens_total", gen, float64(y.gen)),
			eq("inter_token_latency_seconds_count == generation − requests", d.n("vllm:inter_token_latency_seconds"), gen-req),
			ge("e2e_request_latency_seconds_sum ≥ time_to_first_token_seconds_sum", d.s("vllm:e2e_request_latency_seconds"), d.s("vllm:time_to_first_token_seconds")),
			le("time_to_first_token_seconds_sum ≤ Σ client-measured request time", d.s("vllm:time_to_first_token_seconds"), y.clientSec))
	} else {
		cs = append(cs, ge("generation_tokens_total ≥ finished + one per aborted", gen, float64(y.gen)+ab),
			// (every request of an abort phase has n = 1)
			eq("request_max_num_generation_tokens_sum == generation tokens", d.s("vllm:request_max_num_generation_tokens"), gen))
	}
	for _, r := range finishReasons {
		want := float64(y.reasons[r])
		if r == "abort" {
			want = ab
		}
		cs = append(cs, eq(`request_success_total{finished_reason="`+r+`"}`, d.c("vllm:request_success_total", "finished_reason", r), want))
	}
	for _, h := range []string{completion, chatPath} {
		cs = append(cs, eq(`http_requests_total{handler="`+h+`",method="POST",status="2xx"}`,
			d.c("http_requests_total", "handler", h, "method", "POST", "status", "2xx"), float64(y.calls[h])),
			eq(`http_requests_total{handler="`+h+`",method="POST",status="4xx"}`,
				d.c("http_requests_total", "handler", h, "method", "POST", "status", "4xx"), float64(y.rejected[h])),
			eq(`http_requests_total{handler="`+h+`"} (no other status)`, d.c("http_requests_total", "handler", h), float64(y.calls[h]+y.rejected[h])),
			eq(`http_request_duration_seconds_count{handler="`+h+`",method="POST"}`,
				d.n("http_request_duration_seconds", "handler", h, "method", "POST"), float64(y.calls[h]+y.rejected[h])))
	}
	return append(cs, idleChecks(d.b)...)
}

// idleChecks: no request in the engine, and the KV cache empty.
func idleChecks(s *scrape) []check {
	return []check{
		eq("num_requests_running", s.sum("vllm:num_requests_running"), 0),
		eq("num_requests_waiting", s.sum("vllm:num_requests_waiting"), 0),
		eq("num_requests_waiting_by_reason", s.sum("vllm:num_requests_waiting_by_reason"), 0),
		eq("kv_cache_usage_perc", s.sum("vllm:kv_cache_usage_perc"), 0),
	}
}

// catalogProblems checks Part A §1–3 on a scrape: every core family
// present with its type and labels (model_name, engine, the extra label),
// every extra-label child created, and no other vllm:* family (no dead
// series).
func catalogProblems(s *scrape) []string {
	var bad []string
	known := map[string]bool{}
	for _, f := range gateCatalog {
		known[f.name] = true
		fam, ok := s.fams[f.name]
		if !ok {
			bad = append(bad, f.name+": missing")
			continue
		}
		if fam.GetType() != f.typ {
			bad = append(bad, fmt.Sprintf("%s: type %v, want %v", f.name, fam.GetType(), f.typ))
		}
		if f.name == "vllm:cache_config_info" {
			for _, m := range fam.GetMetric() {
				if !matches(m, []string{"engine", "0", "block_size", "16", "enable_prefix_caching", "True", "num_cpu_blocks", "None"}) || len(series(m, "model_name")) > 0 {
					bad = append(bad, f.name+": labels "+seriesKey(m))
				}
			}
			continue
		}
		var got []string
		for _, m := range fam.GetMetric() {
			names := []string{}
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			want := []string{"engine", "model_name"}
			if f.label != "" {
				want = append(want, f.label)
			}
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) || !matches(m, []string{"model_name", gateModel, "engine", "0"}) {
				bad = append(bad, f.name+": labels "+seriesKey(m))
			}
			got = append(got, series(m, f.label)...)
		}
		if f.label == "" {
			if len(fam.GetMetric()) != 1 {
				bad = append(bad, fmt.Sprintf("%s: %d series, want 1", f.name, len(fam.GetMetric())))
			}
			continue
		}
		slices.Sort(got)
		want := slices.Clone(f.values)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			bad = append(bad, fmt.Sprintf("%s: %s children %v, want %v", f.name, f.label, got, want))
		}
	}
	for name := range s.fams {
		if strings.HasPrefix(name, "vllm:") && !known[name] {
			bad = append(bad, name+": exposed but not in the core catalog (a dead series?)")
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if _, ok := s.fams[name]; !ok {
			bad = append(bad, name+": missing (Go runtime and process collectors, Part A §8)")
		}
	}
	for _, h := range []string{"/metrics", "/health"} {
		if len(s.series("http_requests_total", "handler", h)) > 0 || len(s.series("http_request_duration_seconds", "handler", h)) > 0 {
			bad = append(bad, "http metrics count handler "+h)
		}
	}
	slices.Sort(bad)
	return bad
}

// series returns the value of label name on m, as a one-element slice (or
// none).
func series(m *dto.Metric, name string) []string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return []string{l.GetValue()}
		}
	}
	return nil
}

// freshChecks: before any request, every gauge is 0 except awake and
// cache_config_info (1), every counter child and histogram count is 0.
func freshChecks(s *scrape) []check {
	var cs []check
	for _, f := range gateCatalog {
		for _, m := range s.fams[f.name].GetMetric() {
			id := f.name + seriesKey(m)
			switch {
			case f.name == "vllm:cache_config_info", matches(m, []string{"sleep_state", "awake"}):
				cs = append(cs, eq(id, scalar(m), 1))
			case f.typ == dto.MetricType_HISTOGRAM:
				cs = append(cs, eq(id+"_count", float64(m.GetHistogram().GetSampleCount()), 0), eq(id+"_sum", m.GetHistogram().GetSampleSum(), 0))
			default:
				cs = append(cs, eq(id, scalar(m), 0))
			}
		}
	}
	return cs
}

const settle = 20 * time.Second // bound on every poll of /metrics

// TestGate is the async gate: phases of traffic, each checked against the
// scrape-to-scrape change of /metrics.
//
//   - fresh server: the catalog (names, types, labels, eager children, no
//     other vllm:* family), gauges 0 but awake and cache_config_info 1,
//     every counter and histogram at 0;
//   - every scrape: Prometheus text Content-Type, every histogram
//     self-consistent, no counter / histogram count, bucket or sum lower
//     than in the previous scrape;
//   - every phase (phaseChecks): token counters and token histograms equal
//     to what the clients were told, prompt sources summing to the total,
//     prefill KV computed = prompt − cached, iteration tokens = prompt +
//     generation, per-reason success counts, TTFT per request, latency
//     histograms per finished request (client aborts counted under abort
//     but kept out of them), inference = prefill + decode, e2e ≥ queue +
//     inference, ITL per non-first output, HTTP counts per handler and
//     status class, and the engine idle again (running, waiting, KV 0);
//   - per phase, the exact figures of its workload (below).
func TestGate(t *testing.T) {
	noLeaks(t)
	g := newGate(t, gateConfig(t))
	ctx := context.Background()

	fresh := g.sc.scrape(t)
	for _, msg := range catalogProblems(fresh) {
		t.Error("fresh server: " + msg)
	}
	if bad := failing(freshChecks(fresh)); len(bad) > 0 {
		t.Fatalf("fresh server:\n  %s", strings.Join(bad, "\n  "))
	}

	const (
		N, P, M   = 4, 20, 8 // sequential: N requests, prompt P, forced length M
		B         = 16       // block size (cached prefixes are whole blocks)
		K, KM     = 6, 12    // concurrent streams and their length
		holders   = 2        // long streams kept open over the concurrent phase
		holderMax = 480
		LP        = 300 // > the step budget (max-num-batched-tokens 256)
	)
	phases := []struct {
		name  string
		run   func(t *testing.T, y *tally)
		extra func(d delta, y *tally) []check
	}{
		{
			name: "sequential non-streaming completions",
			run: func(t *testing.T, y *tally) {
				for range N {
					g.complete(ctx, y, tokens(1, P), M)
				}
			},
			extra: func(d delta, y *tally) []check {
				// The same prompt N times: every later request hits the
				// first one's full blocks (the lookup stops at P−1 tokens).
				cached := float64((N - 1) * ((P - 1) / B) * B)
				return []check{
					eq("prompt_tokens_total == N·P", d.c("vllm:prompt_tokens_total"), N*P),
					eq("generation_tokens_total == N·M", d.c("vllm:generation_tokens_total"), N*M),
					eq(`request_success_total{length} == N`, d.c("vllm:request_success_total", "finished_reason", "length"), N),
					eq("prompt_tokens_cached_total", d.c("vllm:prompt_tokens_cached_total"), cached),
					eq("prefix_cache_queries_total == N·P", d.c("vllm:prefix_cache_queries_total"), N*P),
					eq("request_prefill_kv_computed_tokens_sum == N·P − Σcached", d.s("vllm:request_prefill_kv_computed_tokens"), N*P-cached),
					eq("inter_token_latency_seconds_count == N·(M−1)", d.n("vllm:inter_token_latency_seconds"), N*(M-1)),
					eq("iteration_tokens_total_count == N·M (one request per step)", d.n("vllm:iteration_tokens_total"), N*M),
					eq("iteration_tokens_total_sum == N·(P+M)", d.s("vllm:iteration_tokens_total"), N*(P+M)),
					eq("request_params_n_sum == N", d.s("vllm:request_params_n"), N),
					eq("request_max_num_generation_tokens_sum == N·M", d.s("vllm:request_max_num_generation_tokens"), N*M),
					eq("request_params_max_tokens_sum == N·M", d.s("vllm:request_params_max_tokens"), N*M),
					eq("request_time_per_output_token_seconds_count == N", d.n("vllm:request_time_per_output_token_seconds"), N),
				}
			},
		},
		{
			// The prompt is longer than the step's token budget: its first
			// chunk runs in a step without outputs, whose statistics (the
			// prefix-cache query) must still be recorded (Part A §5).
			name: "chunked prefill of a long prompt",
			run: func(t *testing.T, y *tally) {
				g.complete(ctx, y, tokens(600, LP), 4)
			},
			extra: func(d delta, y *tally) []check {
				return []check{
					eq("prefix_cache_queries_total (recorded in the step without outputs)", d.c("vllm:prefix_cache_queries_total"), LP),
					eq("prompt_tokens_total", d.c("vllm:prompt_tokens_total"), LP),
					eq("iteration_tokens_total_count (steps with outputs)", d.n("vllm:iteration_tokens_total"), 4),
					eq("iteration_tokens_total_sum", d.s("vllm:iteration_tokens_total"), LP+4),
				}
			},
		},
		{
			name: "bad requests move no engine counter",
			run: func(t *testing.T, y *tally) {
				long, _ := json.Marshal(tokens(5, 600))
				for _, r := range []struct {
					handler, body string
					status        int
				}{
					{completion, `{"model":"` + gateModel + `","prompt":`, 400},
					{completion, `{"model":"` + gateModel + `","prompt":[1,2,3],"max_tokens":-1}`, 400},
					{completion, `{"model":"` + gateModel + `","prompt":[1,2,3],"temperature":"hot"}`, 400},
					{completion, `{"model":"` + gateModel + `","prompt":` + string(long) + `,"max_tokens":4}`, 400},
					{completion, `{"model":"` + gateModel + `","prompt":[1,2,3],"max_tokens":600}`, 400},
					{completion, `{"model":"nope","prompt":[1,2,3]}`, 404},
					{chatPath, `{"model":"` + gateModel + `","messages":[]}`, 400},
					{chatPath, `{"model":"` + gateModel + `","messages":[{"role":"user","content":"hi"}],"top_p":7}`, 400},
				} {
					g.reject(y, r.handler, r.body, r.status)
				}
			},
			extra: func(d delta, y *tally) []check {
				return []check{
					eq("prefix_cache_queries_total", d.c("vllm:prefix_cache_queries_total"), 0),
					eq("iteration_tokens_total_count (no engine step)", d.n("vllm:iteration_tokens_total"), 0),
					eq("request_success_total", d.c("vllm:request_success_total"), 0),
				}
			},
		},
		{
			name: "concurrent streaming completions and chats beside long streams",
			run: func(t *testing.T, y *tally) {
				// Long streams stay in the batch the whole phase: the gauges
				// must show them, and every step of the concurrent requests
				// also carries them (so steps < outputs).
				g.slow.pace.Store(int64(2 * time.Millisecond)) // holderMax steps ≥ 1 s
				defer g.slow.pace.Store(0)
				var cancels []func()
				for i := range holders {
					cancels = append(cancels, g.openStream(t, y, tokens(100+i, 8), holderMax))
				}
				g.sc.await(t, "gauges while streams run", settle, func(s *scrape) []check {
					return []check{
						eq("num_requests_running", s.sum("vllm:num_requests_running"), holders),
						gt("kv_cache_usage_perc", s.sum("vllm:kv_cache_usage_perc"), 0),
					}
				})
				var wg sync.WaitGroup
				for i := range K {
					wg.Go(func() { g.streamComplete(ctx, y, tokens(10+i, 5+3*i), KM) })
				}
				wg.Go(func() { g.chat(ctx, y, "Tell me a story about a dog.", KM, true) })
				wg.Go(func() { g.chat(ctx, y, "Who is Lily?", KM, false) })
				wg.Wait()
				// The long streams were still running: had one finished, its
				// length finish would show in the phase's reasons.
				for _, c := range cancels {
					c()
				}
			},
			extra: func(d delta, y *tally) []check {
				return []check{
					lt("iteration_tokens_total_count < outputs (requests share steps)", d.n("vllm:iteration_tokens_total"), d.c("vllm:generation_tokens_total")),
					eq(`request_success_total{length} == K + 2 chats (long streams still running when cancelled)`,
						d.c("vllm:request_success_total", "finished_reason", "length"), K+2),
				}
			},
		},
		{
			name: "disconnects (non-streaming, and after the first chunk) and a stop string",
			run: func(t *testing.T, y *tally) {
				// A non-streaming client that leaves while its request runs.
				const p, m = 9, holderMax
				cctx, cancel := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() {
					_, err := g.api.Completions.New(cctx, sdk.CompletionNewParams{
						Model: gateModel, Prompt: sdk.CompletionNewParamsPromptUnion{OfArrayOfTokens: tokens(500, p)},
						MaxTokens: sdk.Int(m), Temperature: sdk.Float(0),
					}, option.WithJSONSet("ignore_eos", true))
					done <- err
				}()
				g.sc.await(t, "the non-streaming request runs", settle, func(s *scrape) []check {
					return []check{eq("num_requests_running", s.sum("vllm:num_requests_running"), 1)}
				})
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled non-streaming request: %v", err)
				}
				y.abort(completion, p, m, false)

				start := time.Now()
				c, err := g.api.Completions.New(ctx, sdk.CompletionNewParams{
					Model: gateModel, Prompt: sdk.CompletionNewParamsPromptUnion{OfString: sdk.String("Once upon a time")},
					MaxTokens: sdk.Int(64), Temperature: sdk.Float(0), Stop: sdk.CompletionNewParamsStopUnion{OfString: sdk.String("Lily")},
				})
				if err != nil {
					t.Fatal(err)
				}
				// stories260K continues ", there was a little girl named Lily."
				if ch := c.Choices[0]; ch.FinishReason != "stop" || strings.Contains(ch.Text, "Lily") || !strings.HasSuffix(ch.Text, "named ") {
					t.Fatalf("stop string: finish %q, text %q", ch.FinishReason, ch.Text)
				}
				y.finish(completion, int(c.Usage.PromptTokens), int(c.Usage.CompletionTokens), 64, "stop", time.Since(start))
				g.openStream(t, y, tokens(200, 12), 400)()
			},
		},
		{
			name: "parallel sampling n=3",
			run: func(t *testing.T, y *tally) {
				const n, p, m = 3, 12, 6
				start := time.Now()
				c, err := g.api.Completions.New(ctx, sdk.CompletionNewParams{
					Model: gateModel, Prompt: sdk.CompletionNewParamsPromptUnion{OfArrayOfTokens: tokens(400, p)},
					MaxTokens: sdk.Int(m), N: sdk.Int(n), Seed: sdk.Int(7), Temperature: sdk.Float(1),
				}, option.WithJSONSet("ignore_eos", true))
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Choices) != n || c.Usage.PromptTokens != p || c.Usage.CompletionTokens != n*m {
					t.Fatalf("n=%d: %d choices, usage %+v", n, len(c.Choices), c.Usage)
				}
				gens, reasons := make([]int, n), make([]string, n)
				for i, ch := range c.Choices {
					gens[i], reasons[i] = m, string(ch.FinishReason)
				}
				y.finishParallel(completion, p, m, gens, reasons, time.Since(start))
			},
			extra: func(d delta, y *tally) []check {
				return []check{
					eq("request_params_n_sum", d.s("vllm:request_params_n"), 3),
					eq("request_params_n_count", d.n("vllm:request_params_n"), 1),
					eq("request_success_total{length} (per sequence)", d.c("vllm:request_success_total", "finished_reason", "length"), 3),
					eq("e2e_request_latency_seconds_count (per sequence)", d.n("vllm:e2e_request_latency_seconds"), 3),
				}
			},
		},
	}
	for _, ph := range phases {
		before := g.sc.last
		y := newTally()
		t.Run(ph.name, func(t *testing.T) {
			ph.run(t, y)
			for _, err := range y.errs {
				t.Error(err)
			}
			g.sc.await(t, ph.name, settle, func(s *scrape) []check {
				d := delta{before, s}
				cs := phaseChecks(d, y, false)
				if ph.extra != nil {
					cs = append(cs, ph.extra(d, y)...)
				}
				return cs
			})
		})
		if t.Failed() {
			t.FailNow()
		}
	}

	// After everything: the engine is idle, and the whole run adds up.
	last := g.sc.await(t, "idle after all phases", settle, idleChecks)
	for _, msg := range catalogProblems(last) {
		t.Error("after the run: " + msg)
	}
	if v := last.sum("vllm:engine_sleep_state", "sleep_state", "awake"); v != 1 {
		t.Errorf("engine_sleep_state{awake} = %v after the run", v)
	}
	t.Logf("%d scrapes, counters never decreased, every histogram self-consistent", len(g.sc.all))
}

// TestGatePreemption: a KV cache too small for the concurrent requests
// forces preemptions (recompute), and greedy outputs stay those of the same
// requests run one at a time; the counters do not count re-prefills, and
// every phase invariant still holds.
func TestGatePreemption(t *testing.T) {
	noLeaks(t)
	cfg := gateConfig(t)
	cfg.MaxModelLen = 128
	cfg.NumGPUBlocksOverride = 10 // 160 tokens; each request needs 7 blocks
	g := newGate(t, cfg)
	ctx := context.Background()
	const R, P, M = 6, 10, 100
	start := g.sc.scrape(t)

	alone := make([]string, R)
	y := newTally()
	for i := range R {
		alone[i] = g.complete(ctx, y, tokens(300+i, P), M)
	}
	before := g.sc.await(t, "one at a time", settle, func(s *scrape) []check {
		return phaseChecks(delta{start, s}, y, false)
	})

	batched := make([]string, R)
	y2 := newTally()
	var wg sync.WaitGroup
	for i := range R {
		wg.Go(func() { batched[i] = g.complete(ctx, y2, tokens(300+i, P), M) })
	}
	wg.Wait()
	for _, err := range append(y.errs, y2.errs...) {
		t.Error(err)
	}
	after := g.sc.await(t, "concurrent with preemption", settle, func(s *scrape) []check {
		d := delta{before, s}
		return append(phaseChecks(d, y2, true),
			eq("prompt_tokens_total (re-prefills not counted)", d.c("vllm:prompt_tokens_total"), R*P),
			eq("generation_tokens_total", d.c("vllm:generation_tokens_total"), R*M))
	})
	for i := range R {
		if batched[i] != alone[i] {
			t.Errorf("request %d: greedy output under preemption differs from its output alone:\n got %q\nwant %q", i, batched[i], alone[i])
		}
	}
	t.Logf("%v preemptions", delta{before, after}.c("vllm:num_preemptions_total"))
}
