package metrics

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/stats"
)

// hist is the flattened exposition of a histogram after observing obs in
// order: _count, _sum and every cumulative _bucket including +Inf.
func hist(name string, bounds []float64, obs ...float64) map[string]float64 {
	out := map[string]float64{name + "_count": float64(len(obs))}
	sum := 0.0
	for _, v := range obs {
		sum += v
	}
	out[name+"_sum"] = sum
	for _, ub := range append(slices.Clone(bounds), math.Inf(+1)) {
		n := 0
		for _, v := range obs {
			if v <= ub {
				n++
			}
		}
		out[seriesKey(name+"_bucket", map[string]string{"le": formatLE(ub)})] = float64(n)
	}
	return out
}

func merge(ms ...map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// step is one Record call; a nil field stands for its empty value (a
// step without a scheduler change, or without outputs).
type step struct {
	s  *stats.SchedulerStats
	it *stats.IterationStats
}

// args are the step's Record arguments, never nil.
func (st step) args() (*stats.SchedulerStats, *stats.IterationStats) {
	s, it := st.s, st.it
	if s == nil {
		s = &stats.SchedulerStats{}
	}
	if it == nil {
		it = &stats.IterationStats{}
	}
	return s, it
}

const ms = time.Millisecond

// TestRecord applies hand-built steps and checks every exposed vllm:*
// series: the ones in want take those values, all others keep their
// initial value.
func TestRecord(t *testing.T) {
	finishedStop := stats.FinishedRequestStats{
		FinishReason: stats.FinishStop, E2ELatency: 2 * time.Second, NumPromptTokens: 100, NumGenerationTokens: 9,
		MaxTokensParam: 16, QueuedTime: 250 * ms, PrefillTime: 500 * ms, InferenceTime: 1500 * ms,
		DecodeTime: time.Second, MeanTimePerOutputToken: 125 * ms, NumCachedTokens: 40,
	}
	finishedLength := stats.FinishedRequestStats{
		FinishReason: stats.FinishLength, E2ELatency: 4 * time.Second, NumPromptTokens: 10, NumGenerationTokens: 11,
		QueuedTime: 500 * ms, PrefillTime: 500 * ms, InferenceTime: 3 * time.Second,
		DecodeTime: 2500 * ms, MeanTimePerOutputToken: 250 * ms, NumCachedTokens: -1,
	}
	clientAbort := stats.FinishedRequestStats{
		FinishReason: stats.FinishAbort, ClientAbort: true, E2ELatency: 3 * time.Second, NumPromptTokens: 50,
		NumGenerationTokens: 4, MaxTokensParam: 100, QueuedTime: 125 * ms, PrefillTime: 250 * ms,
		InferenceTime: 750 * ms, DecodeTime: 500 * ms, MeanTimePerOutputToken: 125 * ms,
	}
	engineAbort := clientAbort
	engineAbort.ClientAbort = false

	tests := []struct {
		name  string
		steps []step
		want  map[string]float64
	}{
		{name: "empty stats change nothing", steps: []step{{nil, nil}}},
		{
			name: "scheduler snapshot only",
			steps: []step{{s: &stats.SchedulerStats{
				NumRunningReqs: 3, NumWaitingReqs: 2, NumSkippedWaitingReqs: 1, KVCacheUsage: 0.25,
				PrefixCacheStats: stats.PrefixCacheStats{Requests: 2, Queries: 100, Hits: 40, PreemptedRequests: 1, PreemptedQueries: 7, PreemptedHits: 5},
			}}},
			want: map[string]float64{
				"vllm:num_requests_running":                              3,
				"vllm:num_requests_waiting":                              3,
				`vllm:num_requests_waiting_by_reason{reason="capacity"}`: 2,
				`vllm:num_requests_waiting_by_reason{reason="deferred"}`: 1,
				"vllm:kv_cache_usage_perc":                               0.25,
				"vllm:prefix_cache_queries_total":                        100,
				"vllm:prefix_cache_hits_total":                           40,
			},
		},
		{
			name: "gauges follow the last snapshot, counters add up",
			steps: []step{
				{s: &stats.SchedulerStats{NumRunningReqs: 3, NumWaitingReqs: 2, KVCacheUsage: 0.5,
					PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 100, Hits: 40}}},
				{s: &stats.SchedulerStats{PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 10, Hits: 10}}},
			},
			want: map[string]float64{
				"vllm:prefix_cache_queries_total": 110,
				"vllm:prefix_cache_hits_total":    50,
			},
		},
		{
			name: "prefill step",
			steps: []step{{it: &stats.IterationStats{
				NumGenerationTokens:   2,
				PromptTokenStats:      stats.PromptTokenStats{Computed: 60, LocalCacheHit: 40, CachedTokens: 40, Total: 100},
				NumPreemptedReqs:      1,
				NParamsIter:           []int{1, 2},
				TimeToFirstTokensIter: []time.Duration{500 * ms, 2 * time.Second},
			}}},
			want: merge(map[string]float64{
				"vllm:prompt_tokens_total":                                     100,
				`vllm:prompt_tokens_by_source_total{source="local_compute"}`:   60,
				`vllm:prompt_tokens_by_source_total{source="local_cache_hit"}`: 40,
				"vllm:prompt_tokens_cached_total":                              40,
				"vllm:generation_tokens_total":                                 2,
				"vllm:num_preemptions_total":                                   1,
			},
				hist("vllm:iteration_tokens_total", bIter, 102),
				hist("vllm:request_params_n", bN, 1, 2),
				hist("vllm:time_to_first_token_seconds", bTTFT, 0.5, 2),
			),
		},
		{
			name: "decode steps",
			steps: []step{
				{it: &stats.IterationStats{NumGenerationTokens: 3,
					InterTokenLatenciesIter: []time.Duration{125 * ms, 250 * ms, 62500 * time.Microsecond}}},
				{it: &stats.IterationStats{NumGenerationTokens: 1,
					InterTokenLatenciesIter: []time.Duration{100 * time.Second}}},
			},
			want: merge(map[string]float64{"vllm:generation_tokens_total": 4},
				hist("vllm:iteration_tokens_total", bIter, 3, 1),
				hist("vllm:inter_token_latency_seconds", bITL, 0.125, 0.25, 0.0625, 100),
			),
		},
		{
			name: "finished requests",
			steps: []step{{it: &stats.IterationStats{
				NumGenerationTokens:        2,
				FinishedRequests:           []stats.FinishedRequestStats{finishedStop, finishedLength},
				MaxNumGenerationTokensIter: []int{11},
				NParamsIter:                []int{2},
			}}},
			want: merge(map[string]float64{
				"vllm:generation_tokens_total":                         2,
				`vllm:request_success_total{finished_reason="stop"}`:   1,
				`vllm:request_success_total{finished_reason="length"}`: 1,
			},
				hist("vllm:iteration_tokens_total", bIter, 2),
				hist("vllm:request_max_num_generation_tokens", b125_4096, 11),
				hist("vllm:request_params_n", bN, 2),
				hist("vllm:e2e_request_latency_seconds", bLatency, 2, 4),
				hist("vllm:request_queue_time_seconds", bLatency, 0.25, 0.5),
				hist("vllm:request_prefill_time_seconds", bLatency, 0.5, 0.5),
				hist("vllm:request_inference_time_seconds", bLatency, 1.5, 3),
				hist("vllm:request_decode_time_seconds", bLatency, 1, 2.5),
				hist("vllm:request_time_per_output_token_seconds", bITL, 0.125, 0.25),
				// prompt − max(cached, 0): 100−40 and 10−0.
				hist("vllm:request_prefill_kv_computed_tokens", b125_4096, 60, 10),
				hist("vllm:request_prompt_tokens", b125_4096, 100, 10),
				hist("vllm:request_generation_tokens", b125_4096, 9, 11),
				// max_tokens only when set.
				hist("vllm:request_params_max_tokens", b125_4096, 16),
			),
		},
		{
			name: "client abort counts but stays out of the latency histograms",
			steps: []step{{
				s:  &stats.SchedulerStats{},
				it: &stats.IterationStats{FinishedRequests: []stats.FinishedRequestStats{clientAbort}},
			}},
			want: merge(map[string]float64{
				`vllm:request_success_total{finished_reason="abort"}`: 1,
			},
				hist("vllm:request_prefill_kv_computed_tokens", b125_4096, 50),
				hist("vllm:request_prompt_tokens", b125_4096, 50),
				hist("vllm:request_generation_tokens", b125_4096, 4),
				hist("vllm:request_params_max_tokens", b125_4096, 100),
			),
		},
		{
			name:  "engine abort is observed in the latency histograms",
			steps: []step{{it: &stats.IterationStats{FinishedRequests: []stats.FinishedRequestStats{engineAbort}}}},
			want: merge(map[string]float64{
				`vllm:request_success_total{finished_reason="abort"}`: 1,
			},
				hist("vllm:e2e_request_latency_seconds", bLatency, 3),
				hist("vllm:request_queue_time_seconds", bLatency, 0.125),
				hist("vllm:request_prefill_time_seconds", bLatency, 0.25),
				hist("vllm:request_inference_time_seconds", bLatency, 0.75),
				hist("vllm:request_decode_time_seconds", bLatency, 0.5),
				hist("vllm:request_time_per_output_token_seconds", bITL, 0.125),
				hist("vllm:request_prefill_kv_computed_tokens", b125_4096, 50),
				hist("vllm:request_prompt_tokens", b125_4096, 50),
				hist("vllm:request_generation_tokens", b125_4096, 4),
				hist("vllm:request_params_max_tokens", b125_4096, 100),
			),
		},
		{
			name: "every finish reason has its child",
			steps: []step{{it: &stats.IterationStats{FinishedRequests: []stats.FinishedRequestStats{
				{FinishReason: stats.FinishError}, {FinishReason: stats.FinishRepetition}, {FinishReason: stats.FinishRepetition},
			}}}},
			want: merge(map[string]float64{
				`vllm:request_success_total{finished_reason="error"}`:      1,
				`vllm:request_success_total{finished_reason="repetition"}`: 2,
			},
				hist("vllm:e2e_request_latency_seconds", bLatency, 0, 0, 0),
				hist("vllm:request_queue_time_seconds", bLatency, 0, 0, 0),
				hist("vllm:request_prefill_time_seconds", bLatency, 0, 0, 0),
				hist("vllm:request_inference_time_seconds", bLatency, 0, 0, 0),
				hist("vllm:request_decode_time_seconds", bLatency, 0, 0, 0),
				hist("vllm:request_time_per_output_token_seconds", bITL, 0, 0, 0),
				hist("vllm:request_prefill_kv_computed_tokens", b125_4096, 0, 0, 0),
				hist("vllm:request_prompt_tokens", b125_4096, 0, 0, 0),
				hist("vllm:request_generation_tokens", b125_4096, 0, 0, 0),
			),
		},
		{
			name: "structured-output compile and mask times (govllm extensions)",
			steps: []step{
				{it: &stats.IterationStats{StructuredCompileTimesIter: []time.Duration{3 * ms}, StructuredMaskTimesIter: []time.Duration{40 * time.Microsecond, 2 * ms}}},
				{it: &stats.IterationStats{StructuredMaskTimesIter: []time.Duration{700 * time.Microsecond}}},
			},
			want: merge(
				hist("govllm:structured_output_compile_seconds", bCompile, 0.003),
				hist("govllm:structured_output_mask_seconds", bMask, 0.00004, 0.002, 0.0007),
			),
		},
		{
			name: "negative intervals and counts are clamped",
			steps: []step{{it: &stats.IterationStats{
				NumGenerationTokens:     -1,
				NumPreemptedReqs:        -2,
				TimeToFirstTokensIter:   []time.Duration{-time.Second},
				InterTokenLatenciesIter: []time.Duration{-ms},
			}}},
			want: merge(
				hist("vllm:time_to_first_token_seconds", bTTFT, 0),
				hist("vllm:inter_token_latency_seconds", bITL, 0),
			),
		},
	}

	base := flatten(t, scrape(t, freshPrometheus(t)))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			p := newTestPrometheus(t, reg)
			for _, st := range tt.steps {
				p.Record(st.args())
			}
			got := flatten(t, scrape(t, reg))
			for k := range tt.want {
				if _, ok := base[k]; !ok {
					t.Errorf("want names series %s, which is not exposed", k)
				}
			}
			keys := slices.Sorted(maps.Keys(got))
			for _, k := range keys {
				want, ok := tt.want[k]
				if !ok {
					want = base[k]
				}
				if got[k] != want {
					t.Errorf("%s = %g, want %g", k, got[k], want)
				}
			}
			if len(got) != len(base) {
				t.Errorf("%d series, want %d", len(got), len(base))
			}
		})
	}
}

func freshPrometheus(t *testing.T) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	newTestPrometheus(t, reg)
	return reg
}

// TestRecordSumsAcrossSteps checks the §7.4 invariants on a sequence of
// steps: iteration_tokens_total_sum == prompt_tokens_total +
// generation_tokens_total, and prompt_tokens_by_source sums to
// prompt_tokens_total.
func TestRecordSumsAcrossSteps(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := newTestPrometheus(t, reg)
	iterations := 0
	for i := range 50 {
		it := &stats.IterationStats{NumGenerationTokens: i % 7}
		if i%5 == 0 {
			cached := i % 3 * 16
			it.PromptTokenStats = stats.PromptTokenStats{Computed: 64 - cached, LocalCacheHit: cached, CachedTokens: cached, Total: 64}
		}
		if it.NumIterationTokens() > 0 {
			iterations++
		}
		p.Record(&stats.SchedulerStats{NumRunningReqs: i % 4}, it)
		p.Record(&stats.SchedulerStats{}, &stats.IterationStats{}) // stats-only step
	}
	got := flatten(t, scrape(t, reg))
	prompt, gen := got["vllm:prompt_tokens_total"], got["vllm:generation_tokens_total"]
	if s := got["vllm:iteration_tokens_total_sum"]; s != prompt+gen {
		t.Errorf("iteration_tokens_total_sum = %g, want prompt %g + generation %g", s, prompt, gen)
	}
	if c := got["vllm:iteration_tokens_total_count"]; c != float64(iterations) || iterations != 44 {
		t.Errorf("iteration_tokens_total_count = %g, want %d of 44 (stats-only and token-less steps are not iterations)", c, iterations)
	}
	var bySource float64
	for _, src := range stats.PromptSources {
		bySource += got[seriesKey("vllm:prompt_tokens_by_source_total", map[string]string{"source": src})]
	}
	if bySource != prompt {
		t.Errorf("prompt_tokens_by_source sums to %g, want %g", bySource, prompt)
	}
	if prompt != 10*64 {
		t.Errorf("prompt_tokens_total = %g, want %d", prompt, 10*64)
	}
	if r := got["vllm:num_requests_running"]; r != 0 {
		t.Errorf("running = %g after the final empty snapshot, want 0", r)
	}
}

// typicalStep is one decode step of a 32-request batch in which one
// request finishes.
func typicalStep() (*stats.SchedulerStats, *stats.IterationStats) {
	s := &stats.SchedulerStats{NumRunningReqs: 31, NumWaitingReqs: 4, KVCacheUsage: 0.42,
		PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 128, Hits: 64}}
	it := &stats.IterationStats{
		IterationTimestamp:         time.Unix(1, 0),
		NumGenerationTokens:        32,
		PromptTokenStats:           stats.PromptTokenStats{Computed: 64, LocalCacheHit: 64, CachedTokens: 64, Total: 128},
		TimeToFirstTokensIter:      []time.Duration{120 * ms},
		MaxNumGenerationTokensIter: []int{200},
		NParamsIter:                []int{1},
		FinishedRequests: []stats.FinishedRequestStats{{
			FinishReason: stats.FinishLength, E2ELatency: 5 * time.Second, NumPromptTokens: 128,
			NumGenerationTokens: 200, MaxTokensParam: 200, QueuedTime: 10 * ms, PrefillTime: 100 * ms,
			InferenceTime: 4 * time.Second, DecodeTime: 3900 * ms, MeanTimePerOutputToken: 20 * ms, NumCachedTokens: 64,
		}},
	}
	for i := range 31 {
		it.InterTokenLatenciesIter = append(it.InterTokenLatenciesIter, time.Duration(20+i)*ms)
	}
	return s, it
}

func TestRecordDoesNotAllocate(t *testing.T) {
	p := newTestPrometheus(t, prometheus.NewRegistry())
	s, it := typicalStep()
	if n := testing.AllocsPerRun(100, func() { p.Record(s, it) }); n != 0 {
		t.Errorf("Record allocates %g times per step, want 0", n)
	}
}

// BenchmarkRecord measures Record for a typical step: 32 outputs (31
// inter-token latencies, one first token), one finished request.
func BenchmarkRecord(b *testing.B) {
	p := newTestPrometheus(b, prometheus.NewRegistry())
	s, it := typicalStep()
	b.ReportAllocs()
	for b.Loop() {
		p.Record(s, it)
	}
}

// BenchmarkRecordWithExemplars is BenchmarkRecord with every sample's
// request id: 33 exemplars per step (client_golang allocates each one).
func BenchmarkRecordWithExemplars(b *testing.B) {
	p := newTestPrometheus(b, prometheus.NewRegistry())
	s, it := typicalStep()
	it.TimeToFirstTokenRequestIDs = []string{"chatcmpl-0"}
	for i := range it.InterTokenLatenciesIter {
		it.InterTokenLatencyRequestIDs = append(it.InterTokenLatencyRequestIDs, "chatcmpl-"+strconv.Itoa(i+1))
	}
	it.FinishedRequests[0].RequestID = "chatcmpl-1"
	b.ReportAllocs()
	for b.Loop() {
		p.Record(s, it)
	}
}

// TestRecordWhileScraping records on one goroutine while /metrics is
// scraped on another (for the race detector); counters never decrease.
func TestRecordWhileScraping(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := newTestPrometheus(t, reg)
	s, it := typicalStep()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2000 {
			p.Record(s, it)
		}
	}()
	last := -1.0
	for range 20 {
		g := flatten(t, scrape(t, reg))["vllm:generation_tokens_total"]
		if g < last {
			t.Errorf("generation_tokens_total went from %g to %g", last, g)
		}
		last = g
	}
	<-done
	if g := flatten(t, scrape(t, reg))["vllm:generation_tokens_total"]; g != 2000*32 {
		t.Errorf("generation_tokens_total = %g, want %d", g, 2000*32)
	}
}
