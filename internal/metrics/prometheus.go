package metrics

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/stats"
)

// ErrInvalidOptions is returned (wrapped) by NewPrometheus for options it
// cannot build metrics from.
var ErrInvalidOptions = errors.New("metrics: invalid options")

// Label values of the extra labels, in exposition order of their children.
var (
	waitingReasons = []string{"capacity", "deferred"}
	sleepStates    = []string{"awake", "weights_offloaded", "discard_all"}
)

// PrometheusOptions configures the engine metrics.
type PrometheusOptions struct {
	// ModelName is the served model name (label model_name). Required.
	ModelName string
	// EngineIndex is the engine rank (label engine, "0" for one engine).
	EngineIndex int
	// MaxModelLen caps the 1-2-5 token histograms' buckets. Must be ≥ 1.
	MaxModelLen int
	// CacheConfig becomes the labels of vllm:cache_config_info, e.g.
	// block_size, num_gpu_blocks, enable_prefix_caching, cache_dtype. The
	// label names are the sorted keys followed by engine; a key may not be
	// "engine". May be empty.
	CacheConfig map[string]string
	// NumSpeculativeTokens, when > 0 (speculative decoding is on), adds
	// vLLM's vllm:spec_decode_* counters, the per-position one with a
	// position label 0…NumSpeculativeTokens-1.
	NumSpeculativeTokens int
}

// Prometheus is vLLM's PrometheusStatLogger: it owns every core vllm:*
// family and updates them from one engine step's stats per Record.
//
// Record is safe for concurrent use and concurrent scrapes: it only updates
// the metric children's atomic values.
type Prometheus struct {
	// Scheduler state (gauges).
	running         prometheus.Gauge
	waiting         prometheus.Gauge
	waitingCapacity prometheus.Gauge
	waitingDeferred prometheus.Gauge
	kvUsage         prometheus.Gauge
	sleepState      []prometheus.Gauge // indexed like sleepStates

	// Counters.
	prefixQueries  prometheus.Counter
	prefixHits     prometheus.Counter
	preemptions    prometheus.Counter
	promptTokens   prometheus.Counter
	promptBySource []sourceCounter // one per stats.PromptSources
	promptCached   prometheus.Counter
	genTokens      prometheus.Counter
	success        []prometheus.Counter // indexed by stats.FinishReason; nil where no label value

	// Histograms.
	reqPromptTokens   prometheus.Observer
	reqGenTokens      prometheus.Observer
	iterTokens        prometheus.Observer
	reqMaxGenTokens   prometheus.Observer
	paramsN           prometheus.Observer
	paramsMaxTokens   prometheus.Observer
	ttft              exemplarObserver
	itl               exemplarObserver
	tpot              prometheus.Observer
	e2e               exemplarObserver
	queueTime         prometheus.Observer
	inferenceTime     prometheus.Observer
	prefillTime       prometheus.Observer
	decodeTime        prometheus.Observer
	prefillKVComputed prometheus.Observer

	// govllm extensions (docs/metrics.md, govllm extensions).
	structuredCompile prometheus.Observer
	structuredMask    prometheus.Observer

	// Speculative decoding (nil unless configured).
	specDrafts, specDraftTokens, specAccepted prometheus.Counter
	specAcceptedPerPos                        []prometheus.Counter

	cacheConfigInfo prometheus.Gauge
	collectors      []prometheus.Collector
}

type sourceCounter struct {
	source string
	c      prometheus.Counter
}

// NewPrometheus builds every core vllm:* family, creates all label children
// at their initial values, and registers the families on reg. On error
// nothing stays registered.
func NewPrometheus(reg prometheus.Registerer, opts PrometheusOptions) (*Prometheus, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil Registerer", ErrInvalidOptions)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	b := builder{me: []string{opts.ModelName, strconv.Itoa(opts.EngineIndex)}}
	p := &Prometheus{}
	p.schedulerFamilies(&b)
	p.counterFamilies(&b)
	p.histogramFamilies(&b, opts.MaxModelLen)
	p.structuredFamilies(&b)
	if opts.NumSpeculativeTokens > 0 {
		p.specFamilies(&b, opts.NumSpeculativeTokens)
	}
	info, values := cacheConfigFamily(&b, opts.CacheConfig)

	// Register first: an invalid name or label is reported here, before
	// any child is created from a broken descriptor.
	for i, c := range b.collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range b.collectors[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("metrics: register engine metrics: %w", err)
		}
	}
	p.cacheConfigInfo = info.WithLabelValues(values...)
	p.cacheConfigInfo.Set(1)
	p.collectors = b.collectors
	return p, nil
}

// validate checks the options NewPrometheus needs.
func (opts *PrometheusOptions) validate() error {
	if opts.ModelName == "" {
		return fmt.Errorf("%w: empty ModelName", ErrInvalidOptions)
	}
	if opts.EngineIndex < 0 {
		return fmt.Errorf("%w: negative EngineIndex %d", ErrInvalidOptions, opts.EngineIndex)
	}
	if opts.NumSpeculativeTokens < 0 {
		return fmt.Errorf("%w: negative NumSpeculativeTokens %d", ErrInvalidOptions, opts.NumSpeculativeTokens)
	}
	if opts.MaxModelLen < 1 {
		return fmt.Errorf("%w: MaxModelLen %d < 1", ErrInvalidOptions, opts.MaxModelLen)
	}
	if !utf8.ValidString(opts.ModelName) {
		return fmt.Errorf("%w: ModelName is not valid UTF-8", ErrInvalidOptions)
	}
	for k, v := range opts.CacheConfig {
		if k == "engine" {
			return fmt.Errorf("%w: CacheConfig may not carry the engine label", ErrInvalidOptions)
		}
		if !utf8.ValidString(v) {
			return fmt.Errorf("%w: CacheConfig[%q] is not valid UTF-8", ErrInvalidOptions, k)
		}
	}
	return nil
}

// schedulerFamilies builds the scheduler-state gauges.
func (p *Prometheus) schedulerFamilies(b *builder) {
	// Scheduler state.
	p.running = b.gauge("vllm:num_requests_running",
		"Number of requests in model execution batches.")
	p.waiting = b.gauge("vllm:num_requests_waiting",
		"Number of requests waiting to be processed.")
	byReason := b.gaugeVec("vllm:num_requests_waiting_by_reason",
		"Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; "+
			"'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). "+
			"Sum of all reasons equals vllm:num_requests_waiting.",
		"reason", waitingReasons)
	p.waitingCapacity, p.waitingDeferred = byReason[0], byReason[1]
	p.sleepState = b.gaugeVec("vllm:engine_sleep_state",
		"Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; "+
			"weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
		"sleep_state", sleepStates)
	p.sleepState[0].Set(1) // awake until sleep exists
	p.kvUsage = b.gauge("vllm:kv_cache_usage_perc",
		"KV-cache usage. 1 means 100 percent usage.")
}

// counterFamilies builds the counters.
func (p *Prometheus) counterFamilies(b *builder) {
	p.prefixQueries = b.counter("vllm:prefix_cache_queries_total",
		"Prefix cache queries, in terms of number of queried tokens.")
	p.prefixHits = b.counter("vllm:prefix_cache_hits_total",
		"Prefix cache hits, in terms of number of cached tokens.")
	p.preemptions = b.counter("vllm:num_preemptions_total",
		"Cumulative number of preemption from the engine.")
	p.promptTokens = b.counter("vllm:prompt_tokens_total",
		"Number of prefill tokens processed.")
	bySource := b.counterVec("vllm:prompt_tokens_by_source_total",
		"Number of prompt tokens by source.", "source", stats.PromptSources)
	for i, src := range stats.PromptSources {
		p.promptBySource = append(p.promptBySource, sourceCounter{source: src, c: bySource[i]})
	}
	p.promptCached = b.counter("vllm:prompt_tokens_cached_total",
		"Number of cached prompt tokens (local + external).")
	p.genTokens = b.counter("vllm:generation_tokens_total",
		"Number of generation tokens processed.")
	reasons := make([]string, len(stats.FinishReasons))
	for i, r := range stats.FinishReasons {
		reasons[i] = r.String()
	}
	successByReason := b.counterVec("vllm:request_success_total",
		"Count of successfully processed requests.", "finished_reason", reasons)
	p.success = make([]prometheus.Counter, int(slices.Max(stats.FinishReasons))+1)
	for i, r := range stats.FinishReasons {
		p.success[r] = successByReason[i]
	}
}

// histogramFamilies builds the histograms of counts and of intervals.
func (p *Prometheus) histogramFamilies(b *builder, maxModelLen int) {
	// Histograms of counts.
	tokens125 := Build125Buckets(maxModelLen)
	p.reqPromptTokens = b.histogram("vllm:request_prompt_tokens",
		"Number of prefill tokens processed.", tokens125)
	p.reqGenTokens = b.histogram("vllm:request_generation_tokens",
		"Number of generation tokens processed.", tokens125)
	p.iterTokens = b.histogram("vllm:iteration_tokens_total",
		"Histogram of number of tokens per engine_step.", iterationTokensBuckets)
	p.reqMaxGenTokens = b.histogram("vllm:request_max_num_generation_tokens",
		"Histogram of maximum number of requested generation tokens.", tokens125)
	p.paramsN = b.histogram("vllm:request_params_n",
		"Histogram of the n request parameter.", paramsNBuckets)
	p.paramsMaxTokens = b.histogram("vllm:request_params_max_tokens",
		"Histogram of the max_tokens request parameter.", tokens125)

	// Histograms of timing intervals.
	p.ttft = b.exemplarHistogram("vllm:time_to_first_token_seconds",
		"Histogram of time to first token in seconds.", ttftBuckets)
	p.itl = b.exemplarHistogram("vllm:inter_token_latency_seconds",
		"Histogram of inter-token latency in seconds.", itlBuckets)
	p.tpot = b.histogram("vllm:request_time_per_output_token_seconds",
		"Histogram of time_per_output_token_seconds per request.", itlBuckets)
	p.e2e = b.exemplarHistogram("vllm:e2e_request_latency_seconds",
		"Histogram of e2e request latency in seconds.", requestLatencyBuckets)
	p.queueTime = b.histogram("vllm:request_queue_time_seconds",
		"Histogram of time spent in WAITING phase for request.", requestLatencyBuckets)
	p.inferenceTime = b.histogram("vllm:request_inference_time_seconds",
		"Histogram of time spent in RUNNING phase for request.", requestLatencyBuckets)
	p.prefillTime = b.histogram("vllm:request_prefill_time_seconds",
		"Histogram of time spent in PREFILL phase for request.", requestLatencyBuckets)
	p.decodeTime = b.histogram("vllm:request_decode_time_seconds",
		"Histogram of time spent in DECODE phase for request.", requestLatencyBuckets)
	p.prefillKVComputed = b.histogram("vllm:request_prefill_kv_computed_tokens",
		"Histogram of new KV tokens computed during prefill (excluding cached tokens).", tokens125)
}

// structuredFamilies builds govllm's structured-output histograms (no vLLM
// counterpart, hence the govllm: namespace).
func (p *Prometheus) structuredFamilies(b *builder) {
	p.structuredCompile = b.histogram("govllm:structured_output_compile_seconds",
		"Histogram of the time to compile a request's structured-output constraint and start its states, in seconds "+
			"(a constraint compiled before is a cache lookup).", structuredCompileBuckets)
	p.structuredMask = b.histogram("govllm:structured_output_mask_seconds",
		"Histogram of the time to compute and apply one sequence's structured-output token mask, per sampled token, in seconds.",
		structuredMaskBuckets)
}

// specFamilies builds vLLM's speculative-decoding counters
// (vllm/v1/spec_decode/metrics.py, SpecDecodingProm).
func (p *Prometheus) specFamilies(b *builder, k int) {
	p.specDrafts = b.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.")
	p.specDraftTokens = b.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.")
	p.specAccepted = b.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.")
	pos := make([]string, k)
	for i := range pos {
		pos[i] = strconv.Itoa(i)
	}
	p.specAcceptedPerPos = b.counterVec("vllm:spec_decode_num_accepted_tokens_per_pos_total",
		"Accepted tokens per draft position.", "position", pos)
}

// recordSpec adds a step's speculative-decoding counts.
func (p *Prometheus) recordSpec(sd *stats.SpecDecodingStats) {
	if sd == nil || p.specDrafts == nil {
		return
	}
	addCount(p.specDrafts, sd.NumDrafts)
	addCount(p.specDraftTokens, sd.NumDraftTokens)
	addCount(p.specAccepted, sd.NumAcceptedTokens)
	for i, n := range sd.NumAcceptedPerPos {
		if i < len(p.specAcceptedPerPos) {
			addCount(p.specAcceptedPerPos[i], n)
		}
	}
}

// cacheConfigFamily builds vllm:cache_config_info: one label per
// cache-config attribute (sorted), then engine; no model_name. It returns
// the family and the values of its one child.
func cacheConfigFamily(b *builder, cacheConfig map[string]string) (*prometheus.GaugeVec, []string) {
	keys := make([]string, 0, len(cacheConfig)+1)
	for k := range cacheConfig {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	values := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		values = append(values, cacheConfig[k])
	}
	keys = append(keys, "engine")
	values = append(values, b.me[1])
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vllm:cache_config_info",
		Help: "Information of the LLMEngine CacheConfig",
	}, keys)
	b.collectors = append(b.collectors, info)
	return info, values
}

// Unregister removes every family this Prometheus registered from reg (for
// rebuilding the engine metrics, vLLM unregister_vllm_metrics).
func (p *Prometheus) Unregister(reg prometheus.Registerer) {
	for _, c := range p.collectors {
		reg.Unregister(c)
	}
}

// Record applies one engine step's statistics (vLLM
// PrometheusStatLogger.record, in its order), with the request ids of the
// TTFT, inter-token and e2e samples as exemplars (exemplar.go). Neither
// argument is nil; it is empty for a step without outputs.
//
// iteration_tokens_total observes only a step whose outputs carry tokens.
// vLLM creates IterationStats only for an engine-core message with outputs,
// and its engine core emits an output only for a request that ran in the
// step, so every observed step scheduled tokens. govllm's core also emits a
// token-less output for every abort (client cancellation, stop string) and
// every failed add, so that they reach the finished-request statistics; a
// step carrying only those is not an engine iteration and observes nothing.
func (p *Prometheus) Record(s *stats.SchedulerStats, it *stats.IterationStats) {
	p.running.Set(float64(s.NumRunningReqs))
	p.waiting.Set(float64(s.NumWaitingReqs + s.NumSkippedWaitingReqs))
	p.waitingCapacity.Set(float64(s.NumWaitingReqs))
	p.waitingDeferred.Set(float64(s.NumSkippedWaitingReqs))
	p.kvUsage.Set(s.KVCacheUsage)
	addCount(p.prefixQueries, s.PrefixCacheStats.Queries)
	addCount(p.prefixHits, s.PrefixCacheStats.Hits)
	p.recordSpec(s.SpecDecoding)
	pts := &it.PromptTokenStats
	addCount(p.preemptions, it.NumPreemptedReqs)
	addCount(p.promptTokens, pts.Total)
	for _, sc := range p.promptBySource {
		addCount(sc.c, pts.BySource(sc.source))
	}
	addCount(p.promptCached, pts.CachedTokens)
	addCount(p.genTokens, it.NumGenerationTokens)
	if n := it.NumIterationTokens(); n > 0 {
		p.iterTokens.Observe(float64(n))
	}
	for _, v := range it.MaxNumGenerationTokensIter {
		p.reqMaxGenTokens.Observe(float64(v))
	}
	for _, v := range it.NParamsIter {
		p.paramsN.Observe(float64(v))
	}
	for i, d := range it.TimeToFirstTokensIter {
		observeWithID(p.ttft, seconds(d), it.TTFTRequestID(i))
	}
	for i, d := range it.InterTokenLatenciesIter {
		observeWithID(p.itl, seconds(d), it.ITLRequestID(i))
	}
	for _, d := range it.StructuredCompileTimesIter {
		p.structuredCompile.Observe(seconds(d))
	}
	for _, d := range it.StructuredMaskTimesIter {
		p.structuredMask.Observe(seconds(d))
	}
	for i := range it.FinishedRequests {
		f := &it.FinishedRequests[i]
		if int(f.FinishReason) < len(p.success) && p.success[f.FinishReason] != nil {
			p.success[f.FinishReason].Inc()
		}
		latency := !f.ClientAbort // Part A §6: cancelled requests keep SLO panels clean
		if latency {
			observeWithID(p.e2e, seconds(f.E2ELatency), f.RequestID)
			p.queueTime.Observe(seconds(f.QueuedTime))
			p.prefillTime.Observe(seconds(f.PrefillTime))
			p.inferenceTime.Observe(seconds(f.InferenceTime))
			p.decodeTime.Observe(seconds(f.DecodeTime))
		}
		p.prefillKVComputed.Observe(float64(f.PrefillKVComputedTokens()))
		p.reqPromptTokens.Observe(float64(f.NumPromptTokens))
		p.reqGenTokens.Observe(float64(f.NumGenerationTokens))
		if latency {
			p.tpot.Observe(seconds(f.MeanTimePerOutputToken))
		}
		if f.MaxTokensParam > 0 {
			p.paramsMaxTokens.Observe(float64(f.MaxTokensParam))
		}
	}
}

// addCount adds a non-negative count (Counter.Add panics on negatives).
func addCount(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}

// seconds converts a duration to seconds, clamping negatives to zero.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return d.Seconds()
}

// builder declares families with labels (model_name, engine[, extra]) and
// resolves their children eagerly.
type builder struct {
	me         []string // model_name, engine values
	collectors []prometheus.Collector
}

var meLabels = []string{"model_name", "engine"}

func (b *builder) gauge(name, help string) prometheus.Gauge {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, meLabels)
	b.collectors = append(b.collectors, v)
	return v.WithLabelValues(b.me...)
}

func (b *builder) gaugeVec(name, help, extra string, values []string) []prometheus.Gauge {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append(slices.Clone(meLabels), extra))
	b.collectors = append(b.collectors, v)
	out := make([]prometheus.Gauge, len(values))
	for i, val := range values {
		out[i] = v.WithLabelValues(b.me[0], b.me[1], val)
	}
	return out
}

func (b *builder) counter(name, help string) prometheus.Counter {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, meLabels)
	b.collectors = append(b.collectors, v)
	return v.WithLabelValues(b.me...)
}

func (b *builder) counterVec(name, help, extra string, values []string) []prometheus.Counter {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(slices.Clone(meLabels), extra))
	b.collectors = append(b.collectors, v)
	out := make([]prometheus.Counter, len(values))
	for i, val := range values {
		out[i] = v.WithLabelValues(b.me[0], b.me[1], val)
	}
	return out
}

func (b *builder) histogram(name, help string, buckets []float64) prometheus.Observer {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, meLabels)
	b.collectors = append(b.collectors, v)
	return v.WithLabelValues(b.me...)
}

// exemplarHistogram is histogram for a family whose observations carry
// the request id as an exemplar.
func (b *builder) exemplarHistogram(name, help string, buckets []float64) exemplarObserver {
	return b.histogram(name, help, buckets).(exemplarObserver) // client_golang's histogram child is both
}
