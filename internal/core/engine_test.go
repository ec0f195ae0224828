package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"govllm/internal/kvcache"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testConfig() Config {
	c := DefaultConfig()
	c.KV = kvcache.Config{NumBlocks: 64, BlockSize: 4, EnablePrefixCaching: true}
	c.Sched.MaxModelLen = 128
	c.Sched.MaxNumBatchedTokens = 64
	c.Sched.MaxNumSeqs = 8
	return c
}

func newEngine(t testing.TB, exec Executor) *Engine {
	t.Helper()
	e, err := New(testConfig(), exec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func req(id string, n, maxTokens int) sched.EngineRequest {
	p := sampling.Default()
	p.MaxTokens = maxTokens
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(i + 3)
	}
	return sched.EngineRequest{ID: sched.RequestID(id), PromptTokenIDs: toks, Params: p, EOSTokenID: -1}
}

func fake() *FakeExecutor {
	c := testConfig()
	return &FakeExecutor{Vocab: 100, NumBlocks: c.KV.NumBlocks, BlockSize: c.KV.BlockSize}
}

func TestNew(t *testing.T) {
	if _, err := New(testConfig(), nil); err == nil {
		t.Fatal("nil executor accepted")
	}
	bad := testConfig()
	bad.KV.BlockSize = 0
	if _, err := New(bad, fake()); !errors.Is(err, kvcache.ErrInvalidConfig) {
		t.Fatalf("New = %v", err)
	}
	bad = testConfig()
	bad.Sched.MaxModelLen = 10000
	if _, err := New(bad, fake()); !errors.Is(err, sched.ErrInvalidConfig) {
		t.Fatalf("New = %v", err)
	}
}

// timedExec records when Execute returned.
type timedExec struct {
	FakeExecutor
	last time.Time
}

func (x *timedExec) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	ro, err := x.FakeExecutor.Execute(ctx, so)
	x.last = time.Now()
	return ro, err
}

func TestStep(t *testing.T) {
	x := &timedExec{FakeExecutor: FakeExecutor{Vocab: 50}}
	e := newEngine(t, x)
	ctx := context.Background()

	// Idle: stats only, no execution.
	outs, err := e.Step(ctx)
	if err != nil || len(outs.Outputs) != 0 || outs.SchedulerStats == nil || x.Steps != 0 {
		t.Fatalf("idle step: %+v, %v, executed %d", outs, err, x.Steps)
	}
	if e.HasWork() {
		t.Fatal("HasWork on an empty engine")
	}

	if err := e.AddRequest(req("a", 5, 2)); err != nil {
		t.Fatal(err)
	}
	if err := e.AddRequest(req("a", 5, 2)); !errors.Is(err, sched.ErrDuplicateRequest) {
		t.Fatalf("duplicate AddRequest = %v", err)
	}
	if !e.HasWork() {
		t.Fatal("no work after AddRequest")
	}
	outs, err = e.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs.Outputs) != 1 || outs.Outputs[0].ReqID != "a" || outs.SchedulerStats.NumRunningReqs != 1 {
		t.Fatalf("first step %+v", outs)
	}
	if outs.Timestamp.Before(x.last) {
		t.Fatalf("timestamp %v taken before execute returned %v", outs.Timestamp, x.last)
	}
	if e.ResetPrefixCache() {
		t.Fatal("prefix cache reset while a request holds blocks")
	}
	outs, _ = e.Step(ctx)
	if outs.Outputs[0].FinishReason != stats.FinishLength || outs.SchedulerStats.NumRunningReqs != 0 {
		t.Fatalf("second step %+v", outs)
	}
	if !e.HasWork() {
		t.Fatal("no work owed after the last request left: the stats-only snapshot is due")
	}
	if !e.ResetPrefixCache() || e.Scheduler().KV().NumCachedBlocks() != 0 {
		t.Fatal("prefix cache reset failed on an idle engine")
	}
	if outs, _ = e.Step(ctx); len(outs.Outputs) != 0 || !outs.SchedulerStats.PrefixCacheStats.Reset {
		t.Fatalf("the owed snapshot %+v does not report the reset", outs)
	}
	if e.HasWork() {
		t.Fatal("work after the owed snapshot")
	}
}

func TestExecutorErrorKillsEngine(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		exec Executor
		want error
	}{
		{"executor error", &FakeExecutor{Err: boom}, boom},
		{"short output", execFunc(func(so *sched.SchedulerOutput) *sched.RunnerOutput { return &sched.RunnerOutput{} }), sched.ErrBadRunnerOutput},
		{"no token when sampling", execFunc(func(so *sched.SchedulerOutput) *sched.RunnerOutput {
			return &sched.RunnerOutput{SampledTokenIDs: slices.Repeat([]int32{-1}, len(so.Requests))}
		}), sched.ErrBadRunnerOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.exec)
			e.AddRequest(req("a", 3, 2))
			if _, err := e.Step(context.Background()); !errors.Is(err, tt.want) {
				t.Fatalf("Step = %v, want %v", err, tt.want)
			}
			if _, err := e.Step(context.Background()); !errors.Is(err, ErrEngineDead) || !errors.Is(err, tt.want) {
				t.Fatalf("second Step = %v, want ErrEngineDead wrapping %v", err, tt.want)
			}
		})
	}
}

type execFunc func(so *sched.SchedulerOutput) *sched.RunnerOutput

func (f execFunc) Execute(_ context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	return f(so), nil
}

func TestFakeExecutor(t *testing.T) {
	f := &FakeExecutor{Vocab: 7, EOSAfter: 3, EOSTokenID: 4}
	var outs []int32
	so := &sched.SchedulerOutput{Requests: []sched.ScheduledRequest{{ID: "x", TokenIDs: []int32{1, 2}, Sample: true}}}
	for range 5 {
		sr := &so.Requests[0]
		ro, err := f.Execute(context.Background(), so)
		if err != nil {
			t.Fatal(err)
		}
		tok := ro.SampledTokenIDs[0]
		if tok < 0 || tok >= 7 {
			t.Fatalf("token %d outside vocab", tok)
		}
		outs = append(outs, tok)
		sr.Start += len(sr.TokenIDs)
		sr.TokenIDs = []int32{tok}
		sr.OutputTokenIDs = slices.Clone(outs)
	}
	if outs[2] != 4 || slices.Contains(outs[:2], 4) {
		t.Fatalf("EOS after 3: %v", outs)
	}
	if a, b := FakeToken("x", 5, 1, 1000), FakeToken("x", 5, 1, 1000); a != b {
		t.Fatal("FakeToken not deterministic")
	}
	if FakeToken("x", 5, 1, 1<<30) == FakeToken("y", 5, 1, 1<<30) {
		t.Fatal("FakeToken ignores the request id")
	}
	// KV checking catches a request reading a slot it never wrote.
	k := &FakeExecutor{NumBlocks: 2, BlockSize: 2}
	bad := &sched.SchedulerOutput{Requests: []sched.ScheduledRequest{{
		ID: "x", TokenIDs: []int32{9}, Start: 2, BlockTable: []kvcache.BlockID{0, 1},
		PromptTokenIDs: []int32{1, 2, 9}, Sample: true,
	}}}
	if _, err := k.Execute(context.Background(), bad); !errors.Is(err, ErrFakeKV) {
		t.Fatalf("KV check: %v", err)
	}
}

// recv receives one CoreOutputs or fails once the bubble is idle.
func recv(t *testing.T, out <-chan sched.CoreOutputs) sched.CoreOutputs {
	t.Helper()
	synctest.Wait()
	select {
	case o := <-out:
		if o.SchedulerStats == nil {
			t.Fatal("CoreOutputs without SchedulerStats")
		}
		return o
	default:
		t.Fatal("Run emitted nothing")
		return sched.CoreOutputs{}
	}
}

// expectIdle asserts that Run is blocked and has nothing to send, even
// after a long (fake) time: it does not spin or poll.
func expectIdle(t *testing.T, out <-chan sched.CoreOutputs) {
	t.Helper()
	synctest.Wait() // returns only once every goroutine is durably blocked
	time.Sleep(time.Hour)
	synctest.Wait()
	select {
	case o := <-out:
		t.Fatalf("output while idle: %+v", o)
	default:
	}
}

type runner struct {
	in     chan Command
	out    chan sched.CoreOutputs
	cancel context.CancelFunc
	done   chan error
}

func startRun(t *testing.T, e *Engine) *runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{in: make(chan Command), out: make(chan sched.CoreOutputs), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- e.Run(ctx, r.in, r.out) }()
	return r
}

func (r *runner) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

func zeroGauges(o sched.CoreOutputs) bool {
	s := o.SchedulerStats
	return len(o.Outputs) == 0 && s.NumRunningReqs == 0 && s.NumWaitingReqs == 0 && s.KVCacheUsage == 0
}

func TestRunLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, fake())
		r := startRun(t, e)
		expectIdle(t, r.out)

		ra := req("a", 6, 3)
		r.in <- Command{Add: &ra}
		var toks []int32
		for i := range 3 {
			o := recv(t, r.out)
			if len(o.Outputs) != 1 {
				t.Fatalf("step %d: %d outputs", i, len(o.Outputs))
			}
			toks = append(toks, o.Outputs[0].NewTokenIDs...)
			if want := i == 2; (o.Outputs[0].FinishReason == stats.FinishLength) != want {
				t.Fatalf("step %d: finish %v", i, o.Outputs[0].FinishReason)
			}
		}
		if len(toks) != 3 {
			t.Fatalf("tokens %v", toks)
		}
		// One more, stats-only, with the gauges at zero; then silence.
		if o := recv(t, r.out); !zeroGauges(o) {
			t.Fatalf("final snapshot %+v %+v", o, *o.SchedulerStats)
		}
		expectIdle(t, r.out)

		// It wakes up again for new work.
		rb := req("b", 3, 1)
		r.in <- Command{Add: &rb}
		if o := recv(t, r.out); len(o.Outputs) != 1 || o.Outputs[0].ReqID != "b" {
			t.Fatalf("after wake-up %+v", o)
		}
		if o := recv(t, r.out); !zeroGauges(o) {
			t.Fatalf("final snapshot %+v", o)
		}
		expectIdle(t, r.out)
		r.stop(t)
	})
}

func TestRunAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, fake())
		r := startRun(t, e)
		ra := req("a", 6, 100)
		r.in <- Command{Add: &ra}
		recv(t, r.out) // first token
		// Run is blocked sending the second step; the abort lands after it.
		go func() { r.in <- Command{Abort: []sched.RequestID{"a"}} }()
		var aborted bool
		for range 5 {
			o := recv(t, r.out)
			for _, out := range o.Outputs {
				if out.FinishReason == stats.FinishAbort {
					aborted = true
				}
			}
			if aborted {
				if o.SchedulerStats.NumRunningReqs != 0 || o.SchedulerStats.KVCacheUsage != 0 {
					t.Fatalf("stats after abort %+v", *o.SchedulerStats)
				}
				break
			}
		}
		if !aborted {
			t.Fatal("no abort output")
		}
		if o := recv(t, r.out); !zeroGauges(o) {
			t.Fatalf("final snapshot %+v", o)
		}
		expectIdle(t, r.out)
		r.stop(t)
	})
}

func TestRunAddErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEngine(t, fake())
		r := startRun(t, e)
		empty := sched.EngineRequest{ID: "e", Params: sampling.Default()}
		r.in <- Command{Add: &empty}
		o := recv(t, r.out)
		if len(o.Outputs) != 1 || o.Outputs[0].ReqID != "e" || o.Outputs[0].FinishReason != stats.FinishError {
			t.Fatalf("error output %+v", o)
		}
		if o := recv(t, r.out); !zeroGauges(o) {
			t.Fatalf("final snapshot %+v", o)
		}
		expectIdle(t, r.out)
		r.stop(t)
	})
}

func TestRunClosedInputAndErrors(t *testing.T) {
	t.Run("closed input returns nil when idle", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newEngine(t, fake())
			in := make(chan Command, 1)
			out := make(chan sched.CoreOutputs, 16)
			ra := req("a", 4, 2)
			in <- Command{Add: &ra}
			close(in)
			if err := e.Run(context.Background(), in, out); err != nil {
				t.Fatalf("Run = %v", err)
			}
			close(out)
			var n int
			var last sched.CoreOutputs
			for o := range out {
				n++
				last = o
			}
			if n != 3 || !zeroGauges(last) {
				t.Fatalf("%d outputs, last %+v", n, last)
			}
		})
	})
	t.Run("executor error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			boom := errors.New("boom")
			e := newEngine(t, &FakeExecutor{Err: boom})
			in := make(chan Command, 1)
			ra := req("a", 4, 2)
			in <- Command{Add: &ra}
			if err := e.Run(context.Background(), in, make(chan sched.CoreOutputs)); !errors.Is(err, boom) {
				t.Fatalf("Run = %v", err)
			}
		})
	})
	t.Run("cancel while sending", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newEngine(t, fake())
			r := startRun(t, e)
			ra := req("a", 4, 50)
			r.in <- Command{Add: &ra}
			synctest.Wait() // Run blocked sending; nobody reads
			r.stop(t)
		})
	})
}

// TestRunPreemptionMatchesAlone: through Run with a cache too small for
// everyone, outputs equal each request's outputs alone.
func TestRunPreemptionMatchesAlone(t *testing.T) {
	cfg := testConfig()
	cfg.KV.NumBlocks = 10
	cfg.Sched.MaxModelLen = 40
	preemptions := 0
	run := func(reqs []sched.EngineRequest) map[sched.RequestID][]int32 {
		got := map[sched.RequestID][]int32{}
		synctest.Test(t, func(t *testing.T) {
			e, err := New(cfg, &FakeExecutor{Vocab: 100, NumBlocks: cfg.KV.NumBlocks, BlockSize: cfg.KV.BlockSize})
			if err != nil {
				t.Fatal(err)
			}
			in := make(chan Command, len(reqs))
			out := make(chan sched.CoreOutputs, 1024)
			for i := range reqs {
				in <- Command{Add: &reqs[i]}
			}
			close(in)
			if err := e.Run(context.Background(), in, out); err != nil {
				t.Fatal(err)
			}
			close(out)
			for o := range out {
				for _, x := range o.Outputs {
					got[x.ReqID] = append(got[x.ReqID], x.NewTokenIDs...)
					for _, ev := range x.Events {
						if ev.Type == stats.EventPreempted {
							preemptions++
						}
					}
				}
			}
			if free := e.Scheduler().KV().NumFreeBlocks(); free != cfg.KV.NumBlocks {
				t.Fatalf("free %d", free)
			}
		})
		return got
	}
	var reqs []sched.EngineRequest
	for i := range 4 {
		reqs = append(reqs, req(fmt.Sprint("r", i), 5+i, 20))
	}
	together := run(reqs)
	if preemptions == 0 {
		t.Fatal("the scenario did not preempt")
	}
	for _, r := range reqs {
		alone := run([]sched.EngineRequest{r})
		if !slices.Equal(together[r.ID], alone[r.ID]) || len(alone[r.ID]) != 20 {
			t.Errorf("%s: together %v, alone %v", r.ID, together[r.ID], alone[r.ID])
		}
	}
}

// BenchmarkStep measures the scheduler's per-step overhead with 64 running
// sequences decoding (the fake executor does almost nothing).
func BenchmarkStep(b *testing.B) {
	for _, n := range []int{64} {
		b.Run(fmt.Sprint("seqs=", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Sched.MaxNumSeqs = n
			cfg.Sched.MaxModelLen = 4096
			cfg.Sched.MaxNumBatchedTokens = 8192
			cfg.KV = kvcache.Config{NumBlocks: n * 4096 / 16, BlockSize: 16, EnablePrefixCaching: true}
			e, err := New(cfg, &FakeExecutor{Vocab: 32000})
			if err != nil {
				b.Fatal(err)
			}
			next := 0
			add := func() {
				r := req(fmt.Sprint("req-", next), 32, 4000)
				r.PromptTokenIDs[0] = int32(next) // distinct prompts
				next++
				if err := e.AddRequest(r); err != nil {
					b.Fatal(err)
				}
			}
			for range n {
				add()
			}
			ctx := context.Background()
			e.Step(ctx) // prefill
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				outs, err := e.Step(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range outs.Outputs {
					if o.FinishReason != stats.FinishNone {
						add()
					}
				}
			}
			b.StopTimer()
			if got := e.Scheduler().NumRunning(); got != n {
				b.Fatalf("running %d, want %d", got, n)
			}
		})
	}
}

// TestStepCancelledIsNotFatal: an Execute cancelled with Step's context
// leaves the engine usable, and the outputs are those of an uncancelled run.
func TestStepCancelledIsNotFatal(t *testing.T) {
	collect := func(cancelAt map[int]bool) map[sched.RequestID][]int32 {
		e := newEngine(t, fake())
		for i := range 3 {
			if err := e.AddRequest(req(fmt.Sprint("r", i), 6+5*i, 6)); err != nil {
				t.Fatal(err)
			}
		}
		got := map[sched.RequestID][]int32{}
		for step := 0; e.HasWork(); step++ {
			ctx := context.Background()
			if cancelAt[step] {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			outs, err := e.Step(ctx)
			if cancelAt[step] {
				if !errors.Is(err, context.Canceled) || errors.Is(err, ErrEngineDead) {
					t.Fatalf("cancelled step: %v", err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs.Outputs {
				got[o.ReqID] = append(got[o.ReqID], o.NewTokenIDs...)
			}
		}
		if err := e.Scheduler().CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if free := e.Scheduler().KV().NumFreeBlocks(); free != testConfig().KV.NumBlocks {
			t.Fatalf("free %d", free)
		}
		return got
	}
	want := collect(nil)
	got := collect(map[int]bool{0: true, 2: true, 3: true})
	for id, w := range want {
		if !slices.Equal(got[id], w) || len(w) != 6 {
			t.Errorf("%s: %v, want %v", id, got[id], w)
		}
	}
}
