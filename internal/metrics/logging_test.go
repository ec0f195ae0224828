package metrics

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"govllm/internal/stats"
)

type logRecord struct {
	level slog.Level
	msg   string
}

// recorder is a slog.Handler keeping every record, at every level.
type recorder struct {
	mu   sync.Mutex
	recs []logRecord
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, logRecord{rec.Level, rec.Message})
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) records() []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logRecord(nil), r.recs...)
}

func TestLoggingLine(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  string
		level slog.Level
	}{
		{
			name: "traffic",
			steps: []step{{
				s:  &stats.SchedulerStats{NumRunningReqs: 1, KVCacheUsage: 0.05},
				it: &stats.IterationStats{PromptTokenStats: stats.PromptTokenStats{Computed: 123, Total: 123}, NumGenerationTokens: 456},
			}},
			want:  "Engine 000: Avg prompt throughput: 12.3 tokens/s, Avg generation throughput: 45.6 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%",
			level: slog.LevelInfo,
		},
		{
			name: "prompt throughput counts computed tokens only",
			steps: []step{
				{it: &stats.IterationStats{PromptTokenStats: stats.PromptTokenStats{Computed: 10, LocalCacheHit: 90, CachedTokens: 90, Total: 100}}},
				{it: &stats.IterationStats{PromptTokenStats: stats.PromptTokenStats{Computed: 5, LocalCacheHit: 0, Total: 5}}},
			},
			want:  "Engine 000: Avg prompt throughput: 1.5 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
			level: slog.LevelInfo,
		},
		{
			name: "deferred and preemptions when non-zero; last snapshot wins",
			steps: []step{
				{s: &stats.SchedulerStats{NumRunningReqs: 9, NumWaitingReqs: 9}, it: &stats.IterationStats{NumGenerationTokens: 10, NumPreemptedReqs: 1}},
				{s: &stats.SchedulerStats{NumRunningReqs: 4, NumWaitingReqs: 3, NumSkippedWaitingReqs: 2, KVCacheUsage: 0.9999}, it: &stats.IterationStats{NumGenerationTokens: 1, NumPreemptedReqs: 2}},
			},
			want:  "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1.1 tokens/s, Running: 4 reqs, Waiting: 5 reqs, Deferred: 2 reqs, Preemptions: 3, GPU KV cache usage: 100.0%, Prefix cache hit rate: 0.0%",
			level: slog.LevelInfo,
		},
		{
			name: "prefix cache hit rate over recent requests",
			steps: []step{
				{s: &stats.SchedulerStats{PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 100, Hits: 0}}},
				{s: &stats.SchedulerStats{PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 100, Hits: 50, PreemptedRequests: 1, PreemptedQueries: 100, PreemptedHits: 100}}},
				{s: &stats.SchedulerStats{PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 100, Hits: 50}}},
			},
			want:  "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 33.3%",
			level: slog.LevelDebug,
		},
		{
			name: "structured-output masks and compiles when there were some",
			steps: []step{
				{it: &stats.IterationStats{NumGenerationTokens: 2, StructuredCompileTimesIter: []time.Duration{3 * time.Millisecond}, StructuredMaskTimesIter: []time.Duration{40 * time.Microsecond, 60 * time.Microsecond}}},
				{it: &stats.IterationStats{NumGenerationTokens: 1, StructuredMaskTimesIter: []time.Duration{110 * time.Microsecond}}},
			},
			want:  "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.3 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%, Structured outputs: 3 masks (avg 70.0 µs), 1 compiles (avg 3.0 ms)",
			level: slog.LevelInfo,
		},
		{
			name:  "nothing recorded is idle",
			steps: []step{{nil, nil}},
			want:  "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
			level: slog.LevelDebug,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				l := NewLogging(slog.New(rec), 0)
				if l.Interval() != DefaultLogInterval {
					t.Errorf("Interval() = %v, want %v", l.Interval(), DefaultLogInterval)
				}
				start := time.Now() // the bubble's clock stands still
				for _, st := range tt.steps {
					l.Record(st.args())
				}
				l.Log(start.Add(10 * time.Second))
				got := rec.records()
				if len(got) != 1 {
					t.Fatalf("%d records, want 1", len(got))
				}
				if got[0].msg != tt.want {
					t.Errorf("line\n got %q\nwant %q", got[0].msg, tt.want)
				}
				if got[0].level != tt.level {
					t.Errorf("level %v, want %v", got[0].level, tt.level)
				}
			})
		})
	}
}

// TestLoggingIdle: INFO while there is traffic and for the first idle
// interval after it, DEBUG once two intervals in a row were idle; the
// interval counters reset at each line.
func TestLoggingIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		l := NewLogging(slog.New(rec), time.Second)
		now := time.Now()
		traffic := []bool{false, true, false, false, true, true, false, false, false}
		want := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelInfo, slog.LevelDebug,
			slog.LevelInfo, slog.LevelInfo, slog.LevelInfo, slog.LevelDebug, slog.LevelDebug}
		wantMsg := map[bool]string{
			true:  "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, Preemptions: 1, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
			false: "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
		}
		for _, busy := range traffic {
			if busy {
				l.Record(&stats.SchedulerStats{}, &stats.IterationStats{NumGenerationTokens: 2, NumPreemptedReqs: 1})
			} else {
				l.Record(&stats.SchedulerStats{}, &stats.IterationStats{})
			}
			now = now.Add(time.Second)
			l.Log(now)
		}
		got := rec.records()
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].level != want[i] {
				t.Errorf("interval %d: level %v, want %v", i, got[i].level, want[i])
			}
			if got[i].msg != wantMsg[traffic[i]] {
				t.Errorf("interval %d: %q, want %q", i, got[i].msg, wantMsg[traffic[i]])
			}
		}
		// Log at the same instant as the previous one: no division by zero.
		l.Record(&stats.SchedulerStats{}, &stats.IterationStats{NumGenerationTokens: 5})
		l.Log(now)
		if msg := rec.records()[len(want)].msg; msg != wantMsg[false] {
			t.Errorf("zero-length interval: %q", msg)
		}
	})
}

// TestLoggingRun drives Run with the bubble's fake clock.
func TestLoggingRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		l := NewLogging(slog.New(rec), 10*time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.Run(ctx)
		}()

		l.Record(&stats.SchedulerStats{NumRunningReqs: 2}, &stats.IterationStats{NumGenerationTokens: 100})
		time.Sleep(9 * time.Second)
		synctest.Wait()
		if n := len(rec.records()); n != 0 {
			t.Fatalf("%d lines before the first interval elapsed", n)
		}
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		got := rec.records()
		if len(got) != 1 {
			t.Fatalf("%d lines after one interval, want 1", len(got))
		}
		want := "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 10.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%"
		if got[0].msg != want || got[0].level != slog.LevelInfo {
			t.Errorf("first line %v %q, want INFO %q", got[0].level, got[0].msg, want)
		}

		l.Record(&stats.SchedulerStats{}, &stats.IterationStats{NumGenerationTokens: 5})
		time.Sleep(20 * time.Second)
		synctest.Wait()
		got = rec.records()
		if len(got) != 3 {
			t.Fatalf("%d lines after three intervals, want 3", len(got))
		}
		if want := "Avg generation throughput: 0.5 tokens/s"; !strings.Contains(got[1].msg, want) {
			t.Errorf("second line %q lacks %q", got[1].msg, want)
		}
		if got[2].level != slog.LevelInfo {
			t.Errorf("third line (first idle interval) at %v, want INFO", got[2].level)
		}

		cancel()
		<-done
	})
}

// TestLoggingConcurrent runs Record and Log on different goroutines (for
// the race detector).
func TestLoggingConcurrent(t *testing.T) {
	rec := &recorder{}
	l := NewLogging(slog.New(rec), time.Second)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 1000 {
			l.Record(&stats.SchedulerStats{NumRunningReqs: 1, PrefixCacheStats: stats.PrefixCacheStats{Requests: 1, Queries: 10, Hits: 5}},
				&stats.IterationStats{NumGenerationTokens: 1})
		}
	})
	wg.Go(func() {
		for range 100 {
			l.Log(time.Now())
		}
	})
	wg.Wait()
	if n := len(rec.records()); n != 100 {
		t.Errorf("%d lines, want 100", n)
	}
}

func TestCachingMetrics(t *testing.T) {
	type obs = stats.PrefixCacheStats
	tests := []struct {
		name      string
		max       int
		obs       []obs
		wantRate  float64
		wantState [3]int // requests, queries, hits in the window
	}{
		{name: "empty", wantRate: 0},
		{name: "no queries", obs: []obs{{Requests: 1}}, wantRate: 0, wantState: [3]int{1, 0, 0}},
		{name: "steps without requests are ignored", obs: []obs{{Requests: 1, Queries: 10, Hits: 5}, {Queries: 100, Hits: 0}},
			wantRate: 0.5, wantState: [3]int{1, 10, 5}},
		{name: "oldest evicted past max", max: 3,
			obs:      []obs{{Requests: 1, Queries: 10, Hits: 5}, {Requests: 1, Queries: 10, Hits: 0}, {Requests: 2, Queries: 10, Hits: 10}},
			wantRate: 0.5, wantState: [3]int{3, 20, 10}},
		{name: "newest kept even if larger than max", max: 3,
			obs:      []obs{{Requests: 1, Queries: 10, Hits: 10}, {Requests: 5, Queries: 10, Hits: 1}},
			wantRate: 0.1, wantState: [3]int{5, 10, 1}},
		{name: "reset clears before adding", obs: []obs{{Requests: 1, Queries: 10, Hits: 10}, {Reset: true, Requests: 1, Queries: 10, Hits: 0}},
			wantRate: 0, wantState: [3]int{1, 10, 0}},
		{name: "preempted lookups are not counted", obs: []obs{{Requests: 1, Queries: 4, Hits: 1, PreemptedRequests: 1, PreemptedQueries: 4, PreemptedHits: 4}},
			wantRate: 0.25, wantState: [3]int{1, 4, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CachingMetrics{MaxRecentRequests: tt.max}
			for i := range tt.obs {
				c.Observe(&tt.obs[i])
			}
			if got := c.HitRate(); got != tt.wantRate {
				t.Errorf("HitRate = %g, want %g", got, tt.wantRate)
			}
			if got := [3]int{c.requests, c.queries, c.hits}; got != tt.wantState {
				t.Errorf("window (requests, queries, hits) = %v, want %v", got, tt.wantState)
			}
		})
	}
}

// TestCachingMetricsMatchesDeque compares the ring buffer with a plain
// slice implementation of vLLM's deque over a long pseudo-random sequence
// (wrap-around, growth, resets).
func TestCachingMetricsMatchesDeque(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c CachingMetrics // default window of 1000 requests
	var deque [][3]int
	for i := range 20000 {
		s := stats.PrefixCacheStats{Requests: rng.IntN(40), Queries: rng.IntN(5000)}
		s.Hits = rng.IntN(s.Queries + 1)
		s.Reset = rng.IntN(3000) == 0
		c.Observe(&s)

		if s.Reset {
			deque = deque[:0]
		}
		if s.Requests > 0 {
			deque = append(deque, [3]int{s.Requests, s.Queries, s.Hits})
			for {
				total := 0
				for _, e := range deque {
					total += e[0]
				}
				if len(deque) <= 1 || total <= DefaultMaxRecentRequests {
					break
				}
				deque = deque[1:]
			}
		}
		var want [3]int
		for _, e := range deque {
			want[0] += e[0]
			want[1] += e[1]
			want[2] += e[2]
		}
		if got := [3]int{c.requests, c.queries, c.hits}; got != want || c.n != len(deque) {
			t.Fatalf("step %d: window %v (%d entries), want %v (%d entries)", i, got, c.n, want, len(deque))
		}
	}
}

func BenchmarkLoggingRecord(b *testing.B) {
	l := NewLogging(slog.New(&recorder{}), time.Second)
	s, it := typicalStep()
	b.ReportAllocs()
	for b.Loop() {
		l.Record(s, it)
	}
}
