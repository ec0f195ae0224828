package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"govllm/internal/stats"
)

// DefaultLogInterval is vLLM's VLLM_LOG_STATS_INTERVAL default.
const DefaultLogInterval = 10 * time.Second

// Logging is vLLM's LoggingStatLogger: Record accumulates one engine step's
// statistics, Log writes the periodic line
//
//	Engine 000: Avg prompt throughput: 12.3 tokens/s, Avg generation throughput: 45.6 tokens/s,
//	Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%
//
// (one line; "Deferred: N reqs, " and "Preemptions: N, " appear before the KV
// usage only when non-zero, and govllm appends ", Structured outputs: N
// masks (avg X µs), M compiles (avg Y ms)" in an interval that computed
// structured-output masks or compiled constraints). The line is logged at INFO, or at DEBUG when
// this interval and the previous one both had zero throughput, so exactly
// one INFO line follows the end of the traffic. An interval whose steps
// verified speculative drafts is followed by vLLM's second line, at the
// same level:
//
//	SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 3.00 tokens/s,
//	Drafted throughput: 5.00 tokens/s, Accepted: 30 tokens, Drafted: 50 tokens,
//	Per-position acceptance rate: 0.800, 0.600, Avg Draft acceptance rate: 60.0%
//
// Record and Log/Run may run on different goroutines.
type Logging struct {
	logger   *slog.Logger
	interval time.Duration

	mu                   sync.Mutex
	lastLogTime          time.Time
	numPromptTokens      int // computed (non-cached) prompt tokens this interval
	numGenerationTokens  int
	numPreemptions       int
	sched                stats.SchedulerStats // last snapshot
	prefix               CachingMetrics
	lastPromptThroughput float64
	lastGenThroughput    float64
	structured           structuredTimes // this interval's
	spec                 specTotals      // this interval's
}

// specTotals sums an interval's speculative-decoding counts.
type specTotals struct {
	drafts, draftTokens, accepted int
	perPos                        []int
}

func (s *specTotals) add(sd *stats.SpecDecodingStats) {
	if sd == nil {
		return
	}
	s.drafts += sd.NumDrafts
	s.draftTokens += sd.NumDraftTokens
	s.accepted += sd.NumAcceptedTokens
	if len(s.perPos) < len(sd.NumAcceptedPerPos) {
		s.perPos = append(s.perPos, make([]int, len(sd.NumAcceptedPerPos)-len(s.perPos))...)
	}
	for i, n := range sd.NumAcceptedPerPos {
		s.perPos[i] += n
	}
}

// line is vLLM's SpecDecodingLogging line for an interval of dt seconds
// with drafts ("" without).
func (s *specTotals) line(dt float64) string {
	if s.drafts == 0 {
		return ""
	}
	rates := make([]string, len(s.perPos))
	for i, n := range s.perPos {
		rates[i] = fmt.Sprintf("%.3f", float64(n)/float64(s.drafts))
	}
	var accTP, draftTP float64
	if dt > 0 {
		accTP, draftTP = float64(s.accepted)/dt, float64(s.draftTokens)/dt
	}
	return fmt.Sprintf("SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f tokens/s, "+
		"Drafted throughput: %.2f tokens/s, Accepted: %d tokens, Drafted: %d tokens, Per-position acceptance rate: %s, "+
		"Avg Draft acceptance rate: %.1f%%",
		1+float64(s.accepted)/float64(s.drafts), accTP, draftTP, s.accepted, s.draftTokens,
		strings.Join(rates, ", "), 100*float64(s.accepted)/float64(s.draftTokens))
}

// structuredTimes sums the structured-output compile and mask times.
type structuredTimes struct {
	masks, compiles       int
	maskTime, compileTime time.Duration
}

func (s *structuredTimes) add(it *stats.IterationStats) {
	s.masks += len(it.StructuredMaskTimesIter)
	for _, d := range it.StructuredMaskTimesIter {
		s.maskTime += d
	}
	s.compiles += len(it.StructuredCompileTimesIter)
	for _, d := range it.StructuredCompileTimesIter {
		s.compileTime += d
	}
}

// suffix is the log line's structured-output part, "" when there was none.
func (s *structuredTimes) suffix() string {
	if s.masks == 0 && s.compiles == 0 {
		return ""
	}
	avg := func(d time.Duration, n int, unit time.Duration) float64 {
		if n == 0 {
			return 0
		}
		return float64(d) / float64(n) / float64(unit)
	}
	return fmt.Sprintf(", Structured outputs: %d masks (avg %.1f µs), %d compiles (avg %.1f ms)",
		s.masks, avg(s.maskTime, s.masks, time.Microsecond), s.compiles, avg(s.compileTime, s.compiles, time.Millisecond))
}

// NewLogging returns a Logging writing to logger (slog.Default() if nil)
// every interval (DefaultLogInterval if interval ≤ 0, like vLLM). The first
// interval starts now.
func NewLogging(logger *slog.Logger, interval time.Duration) *Logging {
	if logger == nil {
		logger = slog.Default()
	}
	if interval <= 0 {
		interval = DefaultLogInterval
	}
	return &Logging{logger: logger, interval: interval, lastLogTime: time.Now()}
}

// Interval is the period of Run.
func (l *Logging) Interval() time.Duration { return l.interval }

// Record accumulates one engine step (neither argument is nil).
func (l *Logging) Record(s *stats.SchedulerStats, it *stats.IterationStats) {
	l.mu.Lock()
	// Prompt throughput counts computed tokens only (vLLM #33290).
	l.numPromptTokens += it.PromptTokenStats.Computed
	l.numGenerationTokens += it.NumGenerationTokens
	l.numPreemptions += it.NumPreemptedReqs
	l.prefix.Observe(&s.PrefixCacheStats)
	l.structured.add(it)
	l.spec.add(s.SpecDecoding)
	l.sched = *s
	l.mu.Unlock()
}

// Log computes the throughputs since the previous Log (or construction),
// resets the interval accumulators, and writes the line.
func (l *Logging) Log(now time.Time) {
	line, spec, level := l.line(now)
	l.logger.Log(context.Background(), level, line)
	if spec != "" {
		l.logger.Log(context.Background(), level, spec)
	}
}

// line builds the log line, the speculative-decoding line ("" when the
// interval had no drafts) and their level, and starts the next interval.
func (l *Logging) line(now time.Time) (string, string, slog.Level) {
	l.mu.Lock()
	defer l.mu.Unlock()
	dt := now.Sub(l.lastLogTime).Seconds()
	var promptTP, genTP float64
	if dt > 0 {
		promptTP = float64(l.numPromptTokens) / dt
		genTP = float64(l.numGenerationTokens) / dt
	}
	preemptions := l.numPreemptions
	l.lastLogTime = now
	spec := l.spec.line(dt)
	l.spec = specTotals{}
	l.numPromptTokens, l.numGenerationTokens, l.numPreemptions = 0, 0, 0

	level := slog.LevelInfo
	if promptTP == 0 && genTP == 0 && l.lastPromptThroughput == 0 && l.lastGenThroughput == 0 {
		level = slog.LevelDebug // avoid log noise on an idle system
	}
	l.lastPromptThroughput, l.lastGenThroughput = promptTP, genTP

	var b strings.Builder
	fmt.Fprintf(&b, "Engine %03d: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "+
		"Running: %d reqs, Waiting: %d reqs, ",
		0, promptTP, genTP, l.sched.NumRunningReqs, l.sched.NumWaitingReqs+l.sched.NumSkippedWaitingReqs)
	if l.sched.NumSkippedWaitingReqs > 0 {
		fmt.Fprintf(&b, "Deferred: %d reqs, ", l.sched.NumSkippedWaitingReqs)
	}
	if preemptions > 0 {
		fmt.Fprintf(&b, "Preemptions: %d, ", preemptions)
	}
	fmt.Fprintf(&b, "GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%",
		l.sched.KVCacheUsage*100, l.prefix.HitRate()*100)
	b.WriteString(l.structured.suffix())
	l.structured = structuredTimes{}
	return b.String(), spec, level
}

// Run calls Log every interval until ctx is done.
func (l *Logging) Run(ctx context.Context) {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Log(time.Now())
		}
	}
}

// DefaultMaxRecentRequests is the window of CachingMetrics' zero value.
const DefaultMaxRecentRequests = 1000

// CachingMetrics is the prefix-cache hit rate over roughly the most recent
// requests (vLLM CachingMetrics): a sliding window of per-step
// (requests, queries, hits) deltas, evicting the oldest while the window
// holds more than MaxRecentRequests requests, always keeping the newest.
// The zero value uses DefaultMaxRecentRequests. Not safe for concurrent use.
type CachingMetrics struct {
	MaxRecentRequests int

	requests, queries, hits int
	ring                    []cacheDelta
	head, n                 int
}

type cacheDelta struct{ requests, queries, hits int }

// Observe adds one step's prefix-cache delta. A delta with Reset clears the
// window first; a delta with no requests is ignored.
func (c *CachingMetrics) Observe(s *stats.PrefixCacheStats) {
	if s.Reset {
		c.Reset()
	}
	if s.Requests <= 0 {
		return
	}
	if c.n == len(c.ring) {
		c.grow()
	}
	c.ring[(c.head+c.n)%len(c.ring)] = cacheDelta{s.Requests, s.Queries, s.Hits}
	c.n++
	c.requests += s.Requests
	c.queries += s.Queries
	c.hits += s.Hits
	maxRecent := c.MaxRecentRequests
	if maxRecent <= 0 {
		maxRecent = DefaultMaxRecentRequests
	}
	for c.n > 1 && c.requests > maxRecent {
		old := c.ring[c.head]
		c.head = (c.head + 1) % len(c.ring)
		c.n--
		c.requests -= old.requests
		c.queries -= old.queries
		c.hits -= old.hits
	}
}

func (c *CachingMetrics) grow() {
	ring := make([]cacheDelta, max(16, 2*len(c.ring)))
	for i := range c.n {
		ring[i] = c.ring[(c.head+i)%len(c.ring)]
	}
	c.ring, c.head = ring, 0
}

// Reset empties the window.
func (c *CachingMetrics) Reset() {
	c.requests, c.queries, c.hits = 0, 0, 0
	c.head, c.n = 0, 0
}

// HitRate is hits/queries over the window, 0 when there were no queries.
func (c *CachingMetrics) HitRate() float64 {
	if c.queries == 0 {
		return 0
	}
	return float64(c.hits) / float64(c.queries)
}
