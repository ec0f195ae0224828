package llm

import (
	"context"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/metrics"
	"govllm/internal/tokenizer"
)

// scrape reads a registry back through metrics.Snapshot.
type scrape map[string][]metrics.Metric

func scrapeRegistry(t *testing.T, reg *prometheus.Registry) scrape {
	t.Helper()
	ms, err := metrics.Snapshot(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := scrape{}
	for _, m := range ms {
		s[m.Name] = append(s[m.Name], m)
	}
	return s
}

// get returns the series of name whose labels include kv (pairs).
func (s scrape) get(t *testing.T, name string, kv ...string) metrics.Metric {
	t.Helper()
	var found []metrics.Metric
	for _, m := range s[name] {
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			ok = ok && m.Labels[kv[i]] == kv[i+1]
		}
		if ok {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series", name, kv, len(found))
	}
	return found[0]
}

func newPrometheus(t *testing.T, maxModelLen int) (*prometheus.Registry, *metrics.Prometheus) {
	t.Helper()
	reg := prometheus.NewRegistry()
	p, err := metrics.NewPrometheus(reg, metrics.PrometheusOptions{ModelName: "test", MaxModelLen: maxModelLen})
	if err != nil {
		t.Fatal(err)
	}
	return reg, p
}

// TestPrometheusInvariantsBothFrontEnds scrapes a fresh registry fed by
// metrics.Prometheus after each workload on each front end: every row of
// vLLM's test_metrics_counts table (including the rows vLLM's own test
// skips) and the self-consistency invariants of docs/metrics.md.
func TestPrometheusInvariantsBothFrontEnds(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	for _, w := range workloads {
		for _, fe := range frontEnds {
			t.Run(w.name+"/"+fe.name, func(t *testing.T) {
				cfg := llmConfig(w.opts)
				reg, prom := newPrometheus(t, cfg.MaxModelLen)
				c, g := newCore(t, w.opts)
				rec := newRecorder()
				fe.run(t, c, g, tok, cfg, w.requests(), prom, rec)
				s := scrapeRegistry(t, reg)
				n, p, m := float64(w.n), float64(w.p), float64(w.m)
				cached := float64(rec.snapshot().PromptCached)

				for _, c := range []struct {
					name      string
					got, want float64
				}{
					{"prompt_tokens_total", s.get(t, "vllm:prompt_tokens").Value, n * p},
					{"generation_tokens_total", s.get(t, "vllm:generation_tokens").Value, n * m},
					{"request_success_total{length}", s.get(t, "vllm:request_success", "finished_reason", "length").Value, n},
					{"request_success_total{abort}", s.get(t, "vllm:request_success", "finished_reason", "abort").Value, 0},
					{"request_prompt_tokens_sum", s.get(t, "vllm:request_prompt_tokens").Sum, n * p},
					{"request_generation_tokens_sum", s.get(t, "vllm:request_generation_tokens").Sum, n * m},
					{"request_params_max_tokens_sum", s.get(t, "vllm:request_params_max_tokens").Sum, n * m},
					{"request_params_n_sum", s.get(t, "vllm:request_params_n").Sum, n},
					{"request_max_num_generation_tokens_sum", s.get(t, "vllm:request_max_num_generation_tokens").Sum, n * m},
					{"iteration_tokens_total_sum", s.get(t, "vllm:iteration_tokens_total").Sum, n * (p + m)},
					{"inter_token_latency_seconds_count", float64(s.get(t, "vllm:inter_token_latency_seconds").Count), n * (m - 1)},
					{"request_prefill_kv_computed_tokens_sum", s.get(t, "vllm:request_prefill_kv_computed_tokens").Sum, n*p - cached},
					{"prompt_tokens_cached_total", s.get(t, "vllm:prompt_tokens_cached").Value, cached},
					{"num_requests_running", s.get(t, "vllm:num_requests_running").Value, 0},
					{"num_requests_waiting", s.get(t, "vllm:num_requests_waiting").Value, 0},
					{"kv_cache_usage_perc", s.get(t, "vllm:kv_cache_usage_perc").Value, 0},
				} {
					if c.got != c.want {
						t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
					}
				}
				for _, name := range []string{
					"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
					"vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
					"vllm:request_time_per_output_token_seconds", "vllm:request_params_n", "vllm:request_prompt_tokens",
					"vllm:request_generation_tokens", "vllm:request_max_num_generation_tokens", "vllm:request_prefill_kv_computed_tokens",
				} {
					h := s.get(t, name)
					if float64(h.Count) != n {
						t.Errorf("%s_count = %d, want %g", name, h.Count, n)
					}
					checkBuckets(t, h)
				}
				it := s.get(t, "vllm:iteration_tokens_total")
				if it.Count > uint64(w.n*w.m) {
					t.Errorf("iteration_tokens_total_count %d > N·M", it.Count)
				}
				bySource := 0.0
				for _, src := range []string{"local_compute", "local_cache_hit", "external_kv_transfer"} {
					bySource += s.get(t, "vllm:prompt_tokens_by_source", "source", src).Value
				}
				if bySource != n*p {
					t.Errorf("prompt_tokens_by_source sums to %g, want %g", bySource, n*p)
				}
				inf, pre, dec := s.get(t, "vllm:request_inference_time_seconds").Sum, s.get(t, "vllm:request_prefill_time_seconds").Sum, s.get(t, "vllm:request_decode_time_seconds").Sum
				if math.Abs(inf-(pre+dec)) > 1e-9*math.Max(1, inf) {
					t.Errorf("inference_sum %g != prefill_sum %g + decode_sum %g", inf, pre, dec)
				}
				if e2e, ttft := s.get(t, "vllm:e2e_request_latency_seconds").Sum, s.get(t, "vllm:time_to_first_token_seconds").Sum; e2e < ttft {
					t.Errorf("e2e_sum %g < ttft_sum %g", e2e, ttft)
				}
				if w.opts.numBlocks > 0 && s.get(t, "vllm:num_preemptions").Value == 0 {
					t.Errorf("num_preemptions_total = 0 with a tiny KV cache")
				}
				if w.opts.prefixCaching && s.get(t, "vllm:prefix_cache_queries").Value == 0 {
					t.Errorf("prefix_cache_queries_total = 0 with prefix caching on")
				}
			})
		}
	}
}

func checkBuckets(t *testing.T, h metrics.Metric) {
	t.Helper()
	var prev uint64
	for _, b := range h.Buckets {
		if b.Count < prev {
			t.Errorf("%s: bucket le=%g count %d < previous %d", h.Name, b.UpperBound, b.Count, prev)
		}
		prev = b.Count
	}
	if prev > h.Count || h.Sum < 0 {
		t.Errorf("%s: last bucket %d, count %d, sum %g", h.Name, prev, h.Count, h.Sum)
	}
}

// TestPrometheusClientAbort: a cancelled request moves request_success
// {abort} and the token histograms, and none of the latency histograms.
func TestPrometheusClientAbort(t *testing.T) {
	tok := tokenizer.NewDummy(testVocab)
	reg, prom := newPrometheus(t, llmConfig(coreOpts{}).MaxModelLen)
	c, g := newCore(t, coreOpts{})
	rec := newRecorder()
	a, err := NewAsyncEngine(DefaultConfig(), c, tok, prom, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := a.Generate(ctx, Request{ID: "gone", PromptTokenIDs: prompt(0, 10), Params: forced(500)}); err != nil {
		t.Fatal(err)
	}
	running := stepUntil(t, g, rec, func(a aggregate) bool { return a.GenTokens >= 2 })
	s := scrapeRegistry(t, reg)
	if s.get(t, "vllm:num_requests_running").Value != 1 || s.get(t, "vllm:kv_cache_usage_perc").Value == 0 || running.Last.NumRunningReqs != 1 {
		t.Fatalf("while running: running %g, kv %g", s.get(t, "vllm:num_requests_running").Value, s.get(t, "vllm:kv_cache_usage_perc").Value)
	}
	cancel()
	stepUntil(t, g, rec, func(a aggregate) bool { return a.ClientAborts == 1 })
	g.Open()
	rec.waitIdle(t)
	s = scrapeRegistry(t, reg)
	if v := s.get(t, "vllm:request_success", "finished_reason", "abort").Value; v != 1 {
		t.Errorf("request_success{abort} = %g, want 1", v)
	}
	for _, name := range []string{"vllm:request_prompt_tokens", "vllm:request_generation_tokens", "vllm:request_params_n", "vllm:time_to_first_token_seconds"} {
		if h := s.get(t, name); h.Count != 1 {
			t.Errorf("%s_count = %d, want 1", name, h.Count)
		}
	}
	for _, name := range []string{"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds", "vllm:request_inference_time_seconds",
		"vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds", "vllm:request_time_per_output_token_seconds"} {
		if h := s.get(t, name); h.Count != 0 {
			t.Errorf("%s_count = %d, want 0 for a cancelled request", name, h.Count)
		}
	}
	if s.get(t, "vllm:num_requests_running").Value != 0 || s.get(t, "vllm:kv_cache_usage_perc").Value != 0 {
		t.Errorf("gauges after the abort: running %g, kv %g", s.get(t, "vllm:num_requests_running").Value, s.get(t, "vllm:kv_cache_usage_perc").Value)
	}
}
