package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// family is one row of the contract catalog (docs/metrics.md, Catalog), written out literally so the test does not trust the code's tables.
type family struct {
	name    string
	typ     dto.MetricType
	help    string
	labels  []string  // declared order
	extra   []string  // values of the extra (last) label, if any
	buckets []float64 // histograms
}

var (
	b125_4096 = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}
	bTTFT     = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	bITL      = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	bLatency  = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	bIter     = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	bN        = []float64{1, 2, 5, 10, 20}
	bMask     = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1}
	bCompile  = []float64{0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	me        = []string{"model_name", "engine"}
)

func with(extra string) []string { return []string{"model_name", "engine", extra} }

const (
	gauge     = dto.MetricType_GAUGE
	counter   = dto.MetricType_COUNTER
	histogram = dto.MetricType_HISTOGRAM
)

// catalog for MaxModelLen 4096 and the cache config of testOptions.
var catalog = []family{
	{name: "vllm:num_requests_running", typ: gauge, labels: me,
		help: "Number of requests in model execution batches."},
	{name: "vllm:num_requests_waiting", typ: gauge, labels: me,
		help: "Number of requests waiting to be processed."},
	{name: "vllm:num_requests_waiting_by_reason", typ: gauge, labels: with("reason"), extra: []string{"capacity", "deferred"},
		help: "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting."},
	{name: "vllm:engine_sleep_state", typ: gauge, labels: with("sleep_state"), extra: []string{"awake", "weights_offloaded", "discard_all"},
		help: "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2."},
	{name: "vllm:kv_cache_usage_perc", typ: gauge, labels: me,
		help: "KV-cache usage. 1 means 100 percent usage."},
	{name: "vllm:prefix_cache_queries_total", typ: counter, labels: me,
		help: "Prefix cache queries, in terms of number of queried tokens."},
	{name: "vllm:prefix_cache_hits_total", typ: counter, labels: me,
		help: "Prefix cache hits, in terms of number of cached tokens."},
	{name: "vllm:num_preemptions_total", typ: counter, labels: me,
		help: "Cumulative number of preemption from the engine."},
	{name: "vllm:prompt_tokens_total", typ: counter, labels: me,
		help: "Number of prefill tokens processed."},
	{name: "vllm:prompt_tokens_by_source_total", typ: counter, labels: with("source"), extra: []string{"local_compute", "local_cache_hit", "external_kv_transfer"},
		help: "Number of prompt tokens by source."},
	{name: "vllm:prompt_tokens_cached_total", typ: counter, labels: me,
		help: "Number of cached prompt tokens (local + external)."},
	{name: "vllm:generation_tokens_total", typ: counter, labels: me,
		help: "Number of generation tokens processed."},
	{name: "vllm:request_success_total", typ: counter, labels: with("finished_reason"), extra: []string{"stop", "length", "abort", "error", "repetition"},
		help: "Count of successfully processed requests."},
	{name: "vllm:request_prompt_tokens", typ: histogram, labels: me, buckets: b125_4096,
		help: "Number of prefill tokens processed."},
	{name: "vllm:request_generation_tokens", typ: histogram, labels: me, buckets: b125_4096,
		help: "Number of generation tokens processed."},
	{name: "vllm:iteration_tokens_total", typ: histogram, labels: me, buckets: bIter,
		help: "Histogram of number of tokens per engine_step."},
	{name: "vllm:request_max_num_generation_tokens", typ: histogram, labels: me, buckets: b125_4096,
		help: "Histogram of maximum number of requested generation tokens."},
	{name: "vllm:request_params_n", typ: histogram, labels: me, buckets: bN,
		help: "Histogram of the n request parameter."},
	{name: "vllm:request_params_max_tokens", typ: histogram, labels: me, buckets: b125_4096,
		help: "Histogram of the max_tokens request parameter."},
	{name: "vllm:time_to_first_token_seconds", typ: histogram, labels: me, buckets: bTTFT,
		help: "Histogram of time to first token in seconds."},
	{name: "vllm:inter_token_latency_seconds", typ: histogram, labels: me, buckets: bITL,
		help: "Histogram of inter-token latency in seconds."},
	{name: "vllm:request_time_per_output_token_seconds", typ: histogram, labels: me, buckets: bITL,
		help: "Histogram of time_per_output_token_seconds per request."},
	{name: "vllm:e2e_request_latency_seconds", typ: histogram, labels: me, buckets: bLatency,
		help: "Histogram of e2e request latency in seconds."},
	{name: "vllm:request_queue_time_seconds", typ: histogram, labels: me, buckets: bLatency,
		help: "Histogram of time spent in WAITING phase for request."},
	{name: "vllm:request_inference_time_seconds", typ: histogram, labels: me, buckets: bLatency,
		help: "Histogram of time spent in RUNNING phase for request."},
	{name: "vllm:request_prefill_time_seconds", typ: histogram, labels: me, buckets: bLatency,
		help: "Histogram of time spent in PREFILL phase for request."},
	{name: "vllm:request_decode_time_seconds", typ: histogram, labels: me, buckets: bLatency,
		help: "Histogram of time spent in DECODE phase for request."},
	{name: "vllm:request_prefill_kv_computed_tokens", typ: histogram, labels: me, buckets: b125_4096,
		help: "Histogram of new KV tokens computed during prefill (excluding cached tokens)."},
	// govllm extensions (docs/metrics.md): no vLLM counterpart.
	{name: "govllm:structured_output_compile_seconds", typ: histogram, labels: me, buckets: bCompile,
		help: "Histogram of the time to compile a request's structured-output constraint and start its states, in seconds (a constraint compiled before is a cache lookup)."},
	{name: "govllm:structured_output_mask_seconds", typ: histogram, labels: me, buckets: bMask,
		help: "Histogram of the time to compute and apply one sequence's structured-output token mask, per sampled token, in seconds."},
	{name: "vllm:cache_config_info", typ: gauge,
		labels: []string{"block_size", "cache_dtype", "enable_prefix_caching", "num_gpu_blocks", "engine"},
		help:   "Information of the LLMEngine CacheConfig"},
}

func testOptions() PrometheusOptions {
	return PrometheusOptions{
		ModelName:   "m",
		MaxModelLen: 4096,
		CacheConfig: map[string]string{
			"num_gpu_blocks":        "512",
			"block_size":            "16",
			"enable_prefix_caching": "True",
			"cache_dtype":           "auto",
		},
	}
}

func newTestPrometheus(t testing.TB, reg prometheus.Registerer) *Prometheus {
	t.Helper()
	p, err := NewPrometheus(reg, testOptions())
	if err != nil {
		t.Fatalf("NewPrometheus: %v", err)
	}
	return p
}

// TestCatalog checks the exposed catalog before any request: every family
// with its exact type, HELP, labels, buckets, and every child at its
// initial value; nothing else but go_* and process_*.
func TestCatalog(t *testing.T) {
	reg := NewRegistry()
	p := newTestPrometheus(t, reg)
	mfs := scrape(t, reg)

	for _, f := range catalog {
		t.Run(f.name, func(t *testing.T) {
			mf, ok := mfs[f.name]
			if !ok {
				t.Fatalf("family %s not exposed", f.name)
			}
			if mf.GetType() != f.typ {
				t.Errorf("type %v, want %v", mf.GetType(), f.typ)
			}
			if mf.GetHelp() != f.help {
				t.Errorf("HELP %q, want %q", mf.GetHelp(), f.help)
			}
			wantChildren := max(1, len(f.extra))
			if len(mf.GetMetric()) != wantChildren {
				t.Fatalf("%d children, want %d", len(mf.GetMetric()), wantChildren)
			}
			seen := map[string]bool{}
			for _, m := range mf.GetMetric() {
				labels := map[string]string{}
				var names []string
				for _, lp := range m.GetLabel() {
					labels[lp.GetName()] = lp.GetValue()
					names = append(names, lp.GetName())
				}
				if want := slices.Sorted(slices.Values(f.labels)); !slices.Equal(names, want) {
					t.Errorf("label names %v, want %v", names, want)
				}
				if f.name == "vllm:cache_config_info" {
					want := map[string]string{"block_size": "16", "cache_dtype": "auto", "enable_prefix_caching": "True", "num_gpu_blocks": "512", "engine": "0"}
					if fmt.Sprint(labels) != fmt.Sprint(want) {
						t.Errorf("labels %v, want %v", labels, want)
					}
				} else if labels["model_name"] != "m" || labels["engine"] != "0" {
					t.Errorf("labels %v, want model_name=m engine=0", labels)
				}
				extra := ""
				if len(f.extra) > 0 {
					extra = labels[f.labels[2]]
					if !slices.Contains(f.extra, extra) {
						t.Errorf("unexpected %s=%q", f.labels[2], extra)
					}
					seen[extra] = true
				}
				switch f.typ {
				case gauge:
					want := 0.0
					if f.name == "vllm:cache_config_info" || (f.name == "vllm:engine_sleep_state" && extra == "awake") {
						want = 1
					}
					if got := m.GetGauge().GetValue(); got != want {
						t.Errorf("%s child %q = %g, want %g", f.name, extra, got, want)
					}
				case counter:
					if got := m.GetCounter().GetValue(); got != 0 {
						t.Errorf("child %q = %g, want 0", extra, got)
					}
				case histogram:
					h := m.GetHistogram()
					var bounds []float64
					for _, b := range h.GetBucket() {
						bounds = append(bounds, b.GetUpperBound())
						if b.GetCumulativeCount() != 0 {
							t.Errorf("bucket le=%g = %d, want 0", b.GetUpperBound(), b.GetCumulativeCount())
						}
					}
					// The exposition lists +Inf explicitly.
					if want := append(slices.Clone(f.buckets), math.Inf(+1)); !slices.Equal(bounds, want) {
						t.Errorf("buckets %v, want %v", bounds, want)
					}
					if h.GetSampleCount() != 0 || h.GetSampleSum() != 0 {
						t.Errorf("count %d sum %g, want 0", h.GetSampleCount(), h.GetSampleSum())
					}
				}
			}
			if len(seen) != len(f.extra) {
				t.Errorf("children %v, want all of %v", seen, f.extra)
			}
		})
	}

	// Nothing outside the catalog but the Go and process collectors.
	inCatalog := map[string]bool{}
	for _, f := range catalog {
		inCatalog[f.name] = true
	}
	var goProc int
	for name := range mfs {
		switch {
		case inCatalog[name]:
		case strings.HasPrefix(name, "go_"), strings.HasPrefix(name, "process_"):
			goProc++
		default:
			t.Errorf("family %s is not in the catalog", name)
		}
	}
	if _, ok := mfs["go_goroutines"]; !ok {
		t.Errorf("go_goroutines missing: NewRegistry must register the Go collector")
	}
	if goProc == 0 {
		t.Errorf("no go_*/process_* families")
	}

	// Declared label order: model_name, engine, then the extra label
	// (cache_config_info: its config labels, sorted, then engine).
	descs := make(chan *prometheus.Desc, 64)
	for _, c := range p.collectors {
		c.Describe(descs)
	}
	close(descs)
	declared := map[string]string{}
	for d := range descs {
		s := d.String()
		name := s[strings.Index(s, `fqName: "`)+9:]
		name = name[:strings.IndexByte(name, '"')]
		vl := s[strings.Index(s, "variableLabels: {")+17:]
		declared[name] = vl[:strings.IndexByte(vl, '}')]
	}
	if len(declared) != len(catalog) {
		t.Errorf("%d families declared, want %d", len(declared), len(catalog))
	}
	for _, f := range catalog {
		if got, want := declared[f.name], strings.Join(f.labels, ","); got != want {
			t.Errorf("%s: declared labels {%s}, want {%s}", f.name, got, want)
		}
	}
}

func TestCatalogWithoutCacheConfig(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := testOptions()
	opts.CacheConfig = nil
	opts.EngineIndex = 3
	if _, err := NewPrometheus(reg, opts); err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, reg)
	if len(mfs) != len(catalog) {
		t.Errorf("%d families, want %d (no Go/process collectors on a bare registry)", len(mfs), len(catalog))
	}
	info := mfs["vllm:cache_config_info"].GetMetric()
	if len(info) != 1 || len(info[0].GetLabel()) != 1 || info[0].GetLabel()[0].GetName() != "engine" ||
		info[0].GetLabel()[0].GetValue() != "3" || info[0].GetGauge().GetValue() != 1 {
		t.Errorf("cache_config_info = %v, want one series {engine=\"3\"} 1", info)
	}
	for _, m := range mfs["vllm:request_success_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "engine" && lp.GetValue() != "3" {
				t.Errorf("engine label %q, want 3", lp.GetValue())
			}
		}
	}
}

func TestNewPrometheusErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PrometheusOptions)
	}{
		{"empty model name", func(o *PrometheusOptions) { o.ModelName = "" }},
		{"invalid UTF-8 model name", func(o *PrometheusOptions) { o.ModelName = "\xff" }},
		{"negative engine", func(o *PrometheusOptions) { o.EngineIndex = -1 }},
		{"zero max model len", func(o *PrometheusOptions) { o.MaxModelLen = 0 }},
		{"engine in cache config", func(o *PrometheusOptions) { o.CacheConfig = map[string]string{"engine": "1"} }},
		{"invalid UTF-8 cache config value", func(o *PrometheusOptions) { o.CacheConfig = map[string]string{"block_size": "\xff"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			tt.mutate(&opts)
			_, err := NewPrometheus(prometheus.NewRegistry(), opts)
			if !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("err = %v, want ErrInvalidOptions", err)
			}
		})
	}

	t.Run("registered twice", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p := newTestPrometheus(t, reg)
		_, err := NewPrometheus(reg, testOptions())
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			t.Fatalf("err = %v, want AlreadyRegisteredError", err)
		}
		// After Unregister the families can be built again.
		p.Unregister(reg)
		if _, err := NewPrometheus(reg, testOptions()); err != nil {
			t.Fatalf("after Unregister: %v", err)
		}
	})

	t.Run("invalid cache config label leaves nothing registered", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		opts := testOptions()
		opts.CacheConfig = map[string]string{"__reserved": "x"}
		if _, err := NewPrometheus(reg, opts); err == nil {
			t.Fatal("want an error for a reserved label name")
		}
		if mfs, _ := reg.Gather(); len(mfs) != 0 {
			t.Errorf("%d families left registered", len(mfs))
		}
		if _, err := NewPrometheus(reg, testOptions()); err != nil {
			t.Fatalf("retry: %v", err)
		}
	})
}
