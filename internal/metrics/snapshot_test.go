package metrics

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"govllm/internal/stats"
)

func TestSnapshot(t *testing.T) {
	reg := NewRegistry()
	p := newTestPrometheus(t, reg)
	h, err := NewHTTP(reg)
	if err != nil {
		t.Fatal(err)
	}
	h.requests.WithLabelValues("POST", "2xx", "/v1/completions").Inc()
	p.Record(&stats.SchedulerStats{NumRunningReqs: 2, KVCacheUsage: 0.5}, &stats.IterationStats{
		NumGenerationTokens: 7,
		PromptTokenStats:    stats.PromptTokenStats{Computed: 30, Total: 30},
		FinishedRequests: []stats.FinishedRequestStats{
			{FinishReason: stats.FinishStop, NumPromptTokens: 30, NumGenerationTokens: 7, E2ELatency: 1500 * time.Millisecond},
		},
	})

	snap, err := Snapshot(reg)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Metric{}
	for _, m := range snap {
		if m.Labels["model_name"] != "m" && m.Name != "vllm:cache_config_info" {
			t.Errorf("%s: labels %v lack model_name", m.Name, m.Labels)
		}
		extra := map[string]string{}
		for k, v := range m.Labels {
			if k != "model_name" && k != "engine" {
				extra[k] = v
			}
		}
		if m.Name == "vllm:cache_config_info" {
			extra = nil
		}
		key := seriesKey(m.Name, extra)
		if _, dup := byKey[key]; dup {
			t.Errorf("duplicate series %s", key)
		}
		byKey[key] = m
	}

	// One Metric per label set of every catalog family; nothing else
	// (no go_*, process_*, http_*).
	wantSeries := 0
	for _, f := range catalog {
		wantSeries += max(1, len(f.extra))
	}
	if len(snap) != wantSeries {
		t.Errorf("%d metrics, want %d", len(snap), wantSeries)
	}

	tests := []struct {
		key   string
		kind  Kind
		value float64
	}{
		{"vllm:prompt_tokens", KindCounter, 30},
		{"vllm:generation_tokens", KindCounter, 7},
		{`vllm:request_success{finished_reason="stop"}`, KindCounter, 1},
		{`vllm:request_success{finished_reason="abort"}`, KindCounter, 0},
		{`vllm:prompt_tokens_by_source{source="local_compute"}`, KindCounter, 30},
		{"vllm:num_requests_running", KindGauge, 2},
		{"vllm:kv_cache_usage_perc", KindGauge, 0.5},
		{`vllm:engine_sleep_state{sleep_state="awake"}`, KindGauge, 1},
		{"vllm:cache_config_info", KindGauge, 1},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			m, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no series %s", tt.key)
			}
			if m.Kind != tt.kind || m.Value != tt.value {
				t.Errorf("%s = %v %g, want %v %g", tt.key, m.Kind, m.Value, tt.kind, tt.value)
			}
		})
	}

	t.Run("histograms", func(t *testing.T) {
		gen := byKey["vllm:request_generation_tokens"]
		if gen.Kind != KindHistogram || gen.Count != 1 || gen.Sum != 7 {
			t.Fatalf("request_generation_tokens = %+v, want histogram count 1 sum 7", gen)
		}
		if len(gen.Buckets) != len(b125_4096)+1 {
			t.Fatalf("%d buckets, want %d", len(gen.Buckets), len(b125_4096)+1)
		}
		for i, b := range gen.Buckets {
			want := uint64(0)
			if b.UpperBound >= 7 {
				want = 1
			}
			if i < len(b125_4096) && b.UpperBound != b125_4096[i] {
				t.Errorf("bucket %d bound %g, want %g", i, b.UpperBound, b125_4096[i])
			}
			if b.Count != want {
				t.Errorf("bucket le=%g = %d, want %d", b.UpperBound, b.Count, want)
			}
		}
		if last := gen.Buckets[len(gen.Buckets)-1]; !math.IsInf(last.UpperBound, +1) || last.Count != gen.Count {
			t.Errorf("last bucket %+v, want +Inf with the count", last)
		}
		// A histogram keeps its _total: only counters lose it.
		if it, ok := byKey["vllm:iteration_tokens_total"]; !ok || it.Kind != KindHistogram || it.Count != 1 || it.Sum != 37 {
			t.Errorf("iteration_tokens_total = %+v, want histogram count 1 sum 37", it)
		}
		if e2e := byKey["vllm:e2e_request_latency_seconds"]; e2e.Sum != 1.5 || e2e.Count != 1 {
			t.Errorf("e2e = %+v, want sum 1.5 count 1", e2e)
		}
	})
}

func TestSnapshotGatherError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Snapshot(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return nil, boom }))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindCounter: "counter", KindGauge: "gauge", KindHistogram: "histogram", 0: "Kind(0)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
