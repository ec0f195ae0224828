package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"govllm/internal/core"
	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testVocab = 512

// recorder is a StatLogger that aggregates what it is given, the way a
// metrics backend would, and remembers the last scheduler snapshot.
type recorder struct {
	mu     sync.Mutex
	agg    aggregate
	notify chan struct{} // signalled after every Record
}

type aggregate struct {
	Records, IterRecords    int
	StatsOnly               int  // records whose IterationStats is empty
	LastStatsOnly           bool // the latest record was stats-only
	PromptTokens, GenTokens int
	PromptComputed          int
	PromptCached            int
	IterTokensSum           int
	IterTokensCount         int
	Finished                map[stats.FinishReason]int
	ClientAborts            int
	LatencyObservations     int // finished requests whose latencies would be observed
	TTFT, ITL               int
	Preemptions             int
	NParams, MaxGenTokens   []int
	PrefixQueries           int
	FinishedStats           []stats.FinishedRequestStats
	Last                    stats.SchedulerStats
	MaxRunning              int
	MaxKVUsage              float64
	// AbortSnapshot is the scheduler snapshot of the step whose outputs
	// finished the first client-aborted request.
	AbortSnapshot *stats.SchedulerStats
}

func newRecorder() *recorder {
	return &recorder{agg: aggregate{Finished: map[stats.FinishReason]int{}}, notify: make(chan struct{}, 1)}
}

func (r *recorder) Record(s *stats.SchedulerStats, it *stats.IterationStats) {
	r.mu.Lock()
	a := &r.agg
	a.Records++
	a.LastStatsOnly = it.Empty()
	if it.Empty() {
		a.StatsOnly++
	}
	a.Last = *s
	a.MaxRunning = max(a.MaxRunning, s.NumRunningReqs)
	a.MaxKVUsage = max(a.MaxKVUsage, s.KVCacheUsage)
	a.PrefixQueries += s.PrefixCacheStats.Queries
	if !it.Empty() {
		a.IterRecords++
		a.PromptTokens += it.NumPromptTokens()
		a.PromptComputed += it.PromptTokenStats.Computed
		a.PromptCached += it.PromptTokenStats.CachedTokens
		a.GenTokens += it.NumGenerationTokens
		a.IterTokensSum += it.NumIterationTokens()
		a.IterTokensCount++
		a.TTFT += len(it.TimeToFirstTokensIter)
		a.ITL += len(it.InterTokenLatenciesIter)
		a.Preemptions += it.NumPreemptedReqs
		a.NParams = append(a.NParams, it.NParamsIter...)
		a.MaxGenTokens = append(a.MaxGenTokens, it.MaxNumGenerationTokensIter...)
		for _, f := range it.FinishedRequests {
			a.Finished[f.FinishReason]++
			if f.ClientAbort {
				a.ClientAborts++
				if a.AbortSnapshot == nil && s != nil {
					snap := *s
					a.AbortSnapshot = &snap
				}
			} else {
				a.LatencyObservations++
			}
			a.FinishedStats = append(a.FinishedStats, f)
		}
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() aggregate {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.agg
	a.Finished = map[stats.FinishReason]int{}
	for k, v := range r.agg.Finished {
		a.Finished[k] = v
	}
	return a
}

// waitIdle waits until the recorder's last record is the stats-only
// snapshot of an empty engine that follows the last request's exit. The
// bound is a liveness guard, not a timing assertion.
func (r *recorder) waitIdle(t *testing.T) aggregate {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		a := r.snapshot()
		if a.LastStatsOnly && a.Last.NumRunningReqs == 0 && a.Last.NumWaitingReqs == 0 && a.Last.KVCacheUsage == 0 && a.IterRecords > 0 {
			return a
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("engine never reported idle; last snapshot %+v", a.Last)
		}
	}
}

type coreOpts struct {
	numBlocks, blockSize int
	maxModelLen          int
	maxNumSeqs           int
	budget               int // MaxNumBatchedTokens
	prefixCaching        bool
	execErr              error
	spec                 *sched.Speculative // speculative decoding (nil: off)
	fastForward          bool               // structured outputs draft their forced text
}

// gate holds every Execute until opened, so that requests submitted
// concurrently to the async engine meet in the core and are batched (and
// preempt each other) instead of running one after another.
// Before it opens, a send on step lets exactly one Execute through.
type gate struct {
	inner core.Executor
	open  chan struct{}
	step  chan struct{}
	once  sync.Once
}

func (g *gate) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	select {
	case <-g.open:
	case <-g.step:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.inner.Execute(ctx, so)
}

func (g *gate) Open() { g.once.Do(func() { close(g.open) }) }

func newCore(t testing.TB, o coreOpts) (*core.Engine, *gate) {
	t.Helper()
	cfg := core.DefaultConfig()
	if o.maxModelLen > 0 {
		cfg.Sched.MaxModelLen = o.maxModelLen
		cfg.Sched.MaxNumBatchedTokens = max(cfg.Sched.MaxNumBatchedTokens, o.maxModelLen)
	}
	if o.maxNumSeqs > 0 {
		cfg.Sched.MaxNumSeqs = o.maxNumSeqs
	}
	if o.budget > 0 {
		cfg.Sched.MaxNumBatchedTokens = o.budget
	}
	if o.numBlocks > 0 {
		cfg.KV.NumBlocks, cfg.KV.BlockSize = o.numBlocks, o.blockSize
	}
	cfg.KV.EnablePrefixCaching = o.prefixCaching
	cfg.Sched.Speculative = o.spec
	ex := &core.FakeExecutor{Vocab: testVocab, NumBlocks: cfg.KV.NumBlocks, BlockSize: cfg.KV.BlockSize, Err: o.execErr}
	g := &gate{inner: ex, open: make(chan struct{}), step: make(chan struct{})}
	c, err := core.New(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	return c, g
}

// llmConfig spells the front end's MaxModelLen out (it equals the core's).
func llmConfig(o coreOpts) Config {
	cfg := DefaultConfig()
	cfg.MaxModelLen = core.DefaultConfig().Sched.MaxModelLen
	if o.maxModelLen > 0 {
		cfg.MaxModelLen = o.maxModelLen
	}
	return cfg
}

// prompt returns a deterministic prompt of n byte tokens for request i.
func prompt(i, n int) []int32 {
	ids := make([]int32, n)
	for k := range ids {
		ids[k] = int32('a' + (i*7+k)%26)
	}
	return ids
}

func forced(m int) sampling.Params {
	p := sampling.Default()
	p.Temperature = 0
	p.MaxTokens = m
	p.IgnoreEOS = true
	return p
}

// result is one request's outcome as a consumer assembled it.
type result struct {
	text   []string // per sequence index
	tokens [][]int32
	finish []stats.FinishReason
	stop   []any
}

func (r *result) add(o *output.RequestOutput, kind output.Kind) {
	for _, c := range o.Outputs {
		for len(r.text) <= c.Index {
			r.text = append(r.text, "")
			r.tokens = append(r.tokens, nil)
			r.finish = append(r.finish, 0)
			r.stop = append(r.stop, nil)
		}
		if kind == output.Delta {
			r.text[c.Index] += c.Text
			r.tokens[c.Index] = append(r.tokens[c.Index], c.TokenIDs...)
		} else {
			r.text[c.Index] = c.Text
			r.tokens[c.Index] = append([]int32(nil), c.TokenIDs...)
		}
		if c.FinishReason != stats.FinishNone {
			r.finish[c.Index], r.stop[c.Index] = c.FinishReason, c.StopReason
		}
	}
}

// frontEnd runs a workload to completion on one of the two front ends.
type frontEnd struct {
	name string
	run  func(t *testing.T, c *core.Engine, g *gate, tok *tokenizer.Tokenizer, cfg Config, reqs []Request, loggers ...StatLogger) map[string]*result
}

var frontEnds = []frontEnd{
	{"sync", runSync},
	{"async", runAsync},
}

func runSync(t *testing.T, c *core.Engine, g *gate, tok *tokenizer.Tokenizer, cfg Config, reqs []Request, loggers ...StatLogger) map[string]*result {
	t.Helper()
	g.Open()
	e, err := New(cfg, c, tok, loggers...)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := e.Generate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]*result{}
	for i, o := range outs {
		if o == nil || !o.Finished || o.RequestID != reqs[i].ID {
			t.Fatalf("request %d: output %+v", i, o)
		}
		r := &result{}
		r.add(o, output.FinalOnly)
		res[o.RequestID] = r
	}
	if e.HasUnfinished() {
		t.Fatalf("sync engine still has work after Generate")
	}
	return res
}

// runAsync submits every request concurrently, each read by its own
// streaming consumer, opens the gate once all are submitted, and closes the
// engine once every stream ended and the final stats-only snapshot was
// recorded.
func runAsync(t *testing.T, c *core.Engine, g *gate, tok *tokenizer.Tokenizer, cfg Config, reqs []Request, loggers ...StatLogger) map[string]*result {
	t.Helper()
	idle := newRecorder()
	a, err := NewAsyncEngine(cfg, c, tok, append(loggers, idle)...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res := make([]*result, len(reqs))
	errs := make(chan error, len(reqs))
	var wg, submitted sync.WaitGroup
	for i, r := range reqs {
		// Mix streaming, cumulative and final-only consumers.
		r.OutputKind = []output.Kind{output.Delta, output.Cumulative, output.FinalOnly}[i%3]
		wg.Add(1)
		submitted.Add(1)
		go func() {
			defer wg.Done()
			var err error
			res[i], err = consume(a, r, submitted.Done)
			errs <- err
		}()
	}
	submitted.Wait()
	g.Open()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	idle.waitIdle(t)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	m := map[string]*result{}
	for i, r := range res {
		m[reqs[i].ID] = r
	}
	return m
}

func consume(a *AsyncEngine, r Request, submitted func()) (*result, error) {
	s, err := a.Generate(context.Background(), r)
	submitted()
	if err != nil {
		return nil, err
	}
	res := &result{}
	finished := false
	for {
		o, err := s.Next(context.Background())
		if errors.Is(err, io.EOF) {
			if !finished {
				return nil, fmt.Errorf("%s: EOF before the finished output", r.ID)
			}
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		if o.RequestID != r.ID {
			return nil, fmt.Errorf("%s: got output for %s", r.ID, o.RequestID)
		}
		res.add(o, r.OutputKind)
		finished = o.Finished
	}
}
