package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/stats"
)

// TestSequentialRequests feeds the steps a front end produces for N
// sequential completions of prompt length P and forced length M (one
// prefill step with the first token, M−1 decode steps, the last carrying the
// finish, then a stats-only step) and checks the expectations of vLLM's
// test_metrics_counts table and the §7.4 invariants, read through Snapshot.
func TestSequentialRequests(t *testing.T) {
	const n, p, m, cached = 10, 7, 10, 3
	reg := prometheus.NewRegistry()
	pm := newTestPrometheus(t, reg)
	for r := range n {
		c := 0
		if r > 0 {
			c = cached // later requests hit the prefix cache
		}
		running := &stats.SchedulerStats{NumRunningReqs: 1, KVCacheUsage: 0.1,
			PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: p, Hits: c}}
		pm.Record(running, &stats.IterationStats{
			NumGenerationTokens:   1,
			PromptTokenStats:      stats.PromptTokenStats{Computed: p - c, LocalCacheHit: c, CachedTokens: c, Total: p},
			TimeToFirstTokensIter: []time.Duration{30 * time.Millisecond},
		})
		for i := 1; i < m; i++ {
			it := &stats.IterationStats{NumGenerationTokens: 1, InterTokenLatenciesIter: []time.Duration{5 * time.Millisecond}}
			s := &stats.SchedulerStats{NumRunningReqs: 1, KVCacheUsage: 0.1}
			if i == m-1 {
				s = &stats.SchedulerStats{}
				it.FinishedRequests = []stats.FinishedRequestStats{{
					FinishReason: stats.FinishLength, NumPromptTokens: p, NumGenerationTokens: m, MaxTokensParam: m,
					NumCachedTokens: c, E2ELatency: 80 * time.Millisecond, QueuedTime: time.Millisecond,
					PrefillTime: 20 * time.Millisecond, DecodeTime: 45 * time.Millisecond, InferenceTime: 65 * time.Millisecond,
					MeanTimePerOutputToken: 5 * time.Millisecond,
				}}
				it.MaxNumGenerationTokensIter = []int{m}
				it.NParamsIter = []int{1}
			}
			pm.Record(s, it)
		}
		pm.Record(&stats.SchedulerStats{}, &stats.IterationStats{})
	}

	snap, err := Snapshot(reg)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		name, label string
	}
	got := map[key]Metric{}
	for _, s := range snap {
		l := s.Labels["finished_reason"] + s.Labels["source"] + s.Labels["reason"] + s.Labels["sleep_state"]
		got[key{s.Name, l}] = s
	}
	counts := map[string]uint64{
		"vllm:time_to_first_token_seconds": n, "vllm:e2e_request_latency_seconds": n,
		"vllm:request_queue_time_seconds": n, "vllm:request_inference_time_seconds": n,
		"vllm:request_prefill_time_seconds": n, "vllm:request_decode_time_seconds": n,
		"vllm:request_params_n": n, "vllm:inter_token_latency_seconds": n * (m - 1),
		"vllm:request_prompt_tokens": n, "vllm:request_generation_tokens": n, "vllm:request_params_max_tokens": n,
		"vllm:iteration_tokens_total": n * m, "vllm:request_time_per_output_token_seconds": n,
		"vllm:request_max_num_generation_tokens": n, "vllm:request_prefill_kv_computed_tokens": n,
	}
	for name, want := range counts {
		h := got[key{name, ""}]
		if h.Count != want {
			t.Errorf("%s_count = %d, want %d", name, h.Count, want)
		}
		prev := uint64(0)
		for _, b := range h.Buckets {
			if b.Count < prev {
				t.Errorf("%s: bucket le=%g decreases", name, b.UpperBound)
			}
			prev = b.Count
		}
		if last := h.Buckets[len(h.Buckets)-1]; !math.IsInf(last.UpperBound, 1) || last.Count != h.Count {
			t.Errorf("%s: +Inf bucket %d, count %d", name, last.Count, h.Count)
		}
		if h.Sum < 0 {
			t.Errorf("%s_sum = %g < 0", name, h.Sum)
		}
	}
	sums := map[string]float64{
		"vllm:request_prompt_tokens": n * p, "vllm:request_generation_tokens": n * m,
		"vllm:request_params_max_tokens": n * m, "vllm:iteration_tokens_total": n * (p + m),
		"vllm:request_params_n": n, "vllm:request_max_num_generation_tokens": n * m,
		"vllm:request_prefill_kv_computed_tokens": n*p - (n-1)*cached,
	}
	for name, want := range sums {
		if s := got[key{name, ""}].Sum; s != want {
			t.Errorf("%s_sum = %g, want %g", name, s, want)
		}
	}
	values := map[key]float64{
		{"vllm:prompt_tokens", ""}:                        n * p,
		{"vllm:generation_tokens", ""}:                    n * m,
		{"vllm:request_success", "length"}:                n,
		{"vllm:request_success", "stop"}:                  0,
		{"vllm:prompt_tokens_cached", ""}:                 (n - 1) * cached,
		{"vllm:prompt_tokens_by_source", "local_compute"}: n*p - (n-1)*cached,
		{"vllm:prefix_cache_queries", ""}:                 n * p,
		{"vllm:prefix_cache_hits", ""}:                    (n - 1) * cached,
		{"vllm:num_requests_running", ""}:                 0,
		{"vllm:kv_cache_usage_perc", ""}:                  0,
	}
	for k, want := range values {
		if v := got[k].Value; v != want {
			t.Errorf("%s{%s} = %g, want %g", k.name, k.label, v, want)
		}
	}
	if inf, pre, dec := got[key{"vllm:request_inference_time_seconds", ""}].Sum,
		got[key{"vllm:request_prefill_time_seconds", ""}].Sum,
		got[key{"vllm:request_decode_time_seconds", ""}].Sum; math.Abs(inf-(pre+dec)) > 1e-9 {
		t.Errorf("inference %g != prefill %g + decode %g", inf, pre, dec)
	}
	if e2e, ttft := got[key{"vllm:e2e_request_latency_seconds", ""}].Sum, got[key{"vllm:time_to_first_token_seconds", ""}].Sum; e2e < ttft {
		t.Errorf("e2e sum %g < ttft sum %g", e2e, ttft)
	}
}
