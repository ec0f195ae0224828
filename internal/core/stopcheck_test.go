package core

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"govllm/internal/sched"
	"govllm/internal/stats"
)

// TestRunWaitsForStopCheck: after a step that gave a token to a request
// with stop strings, Run schedules nothing until the front end answers
// (StopChecked), so a sequence that a stop string finished is never run
// again, however far behind the front end is (the AsyncEngine's buffers).
func TestRunWaitsForStopCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fake()
		e := newEngine(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		in, out := make(chan Command, 8), make(chan sched.CoreOutputs, 8)
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx, in, out) }()
		a := req("a", 6, 100)
		a.Params.Stop = []string{"x"}
		in <- Command{Add: &a}
		for i, answer := range []Command{{StopChecked: true}, {StopChecked: true, Abort: []sched.RequestID{"a"}}} {
			synctest.Wait()
			if f.Steps != i+1 || len(out) != 1 {
				t.Fatalf("Run went on without the front end: %d steps, %d outputs queued, want %d and 1", f.Steps, len(out), i+1)
			}
			if o := <-out; !o.StopCheck || len(o.Outputs) != 1 || len(o.Outputs[0].NewTokenIDs) != 1 {
				t.Fatalf("step %d: %+v", i+1, o)
			}
			in <- answer
		}
		synctest.Wait()
		if o := <-out; f.Steps != 2 || o.StopCheck || len(o.Outputs) != 1 || o.Outputs[0].FinishReason != stats.FinishAbort {
			t.Fatalf("after the stop: %d steps, %+v; want 2 steps and only the abort output", f.Steps, o)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Run returned %v", err)
		}
	})
}
