package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"govllm/internal/kvcache"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// Executor runs one step's batch and samples (implemented by the runner).
type Executor interface {
	Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error)
}

// ErrEngineDead is returned by Step after an executor failure.
var ErrEngineDead = errors.New("core: engine is dead")

// PanicError is a panic recovered on an engine goroutine: the engine is
// dead from then on, and every request fails with this cause. Stack is the
// panicking goroutine's stack, for the log.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Recovered turns a recovered panic value into a *PanicError (nil for nil).
// Call it as `if err := core.Recovered(recover()); err != nil`.
func Recovered(v any) *PanicError {
	if v == nil {
		return nil
	}
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// die makes the engine dead with err (the first cause sticks).
func (e *Engine) die(err error) error {
	if e.err == nil {
		e.err = err
	}
	return e.err
}

// Config is the engine core's configuration.
type Config struct {
	Sched sched.Config
	KV    kvcache.Config
}

// DefaultConfig combines the scheduler and KV-cache defaults.
func DefaultConfig() Config {
	return Config{Sched: sched.DefaultConfig(), KV: kvcache.DefaultConfig()}
}

// Validate checks both parts.
func (c Config) Validate() error {
	if err := c.Sched.Validate(); err != nil {
		return err
	}
	return c.KV.Validate()
}

// Engine is the synchronous engine core. Not safe for concurrent use.
type Engine struct {
	cfg  Config
	s    *sched.Scheduler
	exec Executor
	err  error // sticky executor failure
	// errOutputs report Commands whose AddRequest failed (Run only).
	errOutputs []sched.CoreOutput
	// owed: the last request just left; one more step publishes the
	// stats-only snapshot, so gauges return to 0 (HasWork says so).
	owed bool
}

// New builds an Engine with a fresh KV-cache manager and scheduler.
func New(cfg Config, exec Executor) (*Engine, error) {
	if exec == nil {
		return nil, fmt.Errorf("core: nil executor")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	kv, err := kvcache.NewManager(cfg.KV)
	if err != nil {
		return nil, err
	}
	s, err := sched.New(cfg.Sched, kv)
	if err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, s: s, exec: exec}, nil
}

// Config returns the configuration the engine was built with.
func (e *Engine) Config() Config { return e.cfg }

// Scheduler exposes the scheduler for inspection between steps (tests).
func (e *Engine) Scheduler() *sched.Scheduler { return e.s }

// AddRequest queues a request (errors wrap sched.ErrDuplicateRequest,
// ErrEmptyPrompt, ErrPromptTooLong or ErrInvalidRequest).
func (e *Engine) AddRequest(r sched.EngineRequest) error { return e.s.AddRequest(r) }

// Abort finishes requests at once; each yields a FinishAbort output next step.
func (e *Engine) Abort(ids ...sched.RequestID) { e.s.Abort(ids...) }

// ResetPrefixCache drops the prefix cache when no KV block is in use.
func (e *Engine) ResetPrefixCache() bool { return e.s.ResetPrefixCache() }

// HasWork reports whether Step has something to do: unfinished requests,
// undelivered outputs, or the stats-only snapshot owed after the last
// request left (so that the gauges a stat logger records return to 0).
func (e *Engine) HasWork() bool { return e.busy() || e.owed }

// busy reports unfinished requests or undelivered outputs.
func (e *Engine) busy() bool {
	return e.s.HasRequests() || e.s.HasPendingOutputs() || len(e.errOutputs) > 0
}

// Step runs one step: schedule, execute (skipped when nothing is scheduled),
// update. The result always carries SchedulerStats, and its Timestamp is
// taken after execution. An executor error (or an output that does not
// match the batch) kills the engine, except the cancellation of ctx itself:
// then Step returns an error wrapping ctx.Err() and the engine stays usable
// (the next Step redoes the work).
func (e *Engine) Step(ctx context.Context) (_ sched.CoreOutputs, err error) {
	if e.err != nil {
		return sched.CoreOutputs{}, fmt.Errorf("%w: %w", ErrEngineDead, e.err)
	}
	defer func() { // a panic in the scheduler or the executor kills the engine, not the process
		if pe := Recovered(recover()); pe != nil {
			err = e.die(fmt.Errorf("core: step: %w", pe))
		}
	}()
	busy := e.busy()
	so := e.s.Schedule()
	var ro *sched.RunnerOutput
	if len(so.Requests) > 0 {
		var err error
		ro, err = e.exec.Execute(ctx, so)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Cancelled, not broken: the step is planned again next time.
			e.s.AbandonStep(so)
			return sched.CoreOutputs{}, fmt.Errorf("core: step cancelled: %w", err)
		}
		if err == nil {
			err = sched.CheckRunnerOutput(so, ro)
		}
		if err != nil {
			return sched.CoreOutputs{}, e.die(fmt.Errorf("core: execute %d requests: %w", len(so.Requests), err))
		}
	}
	outs := e.s.UpdateFromOutput(so, ro)
	if len(e.errOutputs) > 0 {
		outs.Outputs = append(e.errOutputs, outs.Outputs...)
		e.errOutputs = nil
	}
	e.owed = busy && !e.busy()
	return outs, nil
}

// Command is one instruction to Run.
type Command struct {
	// Add queues a request. A failed Add (the request was validated
	// before, so this is a bug or a duplicate id) is reported as a
	// CoreOutput{FinishReason: FinishError} for Add.ID in the next step.
	Add *sched.EngineRequest
	// Abort finishes these requests (FinishAbort).
	Abort []sched.RequestID
	// StopChecked answers a CoreOutputs with StopCheck: the front end
	// checked its stop strings, and Abort holds the sequences they finished.
	StopChecked bool
}

// Run owns the Engine on the calling goroutine: it applies pending
// Commands, steps while HasWork and sends every step's CoreOutputs
// (stats-only ones too, such as the one after the last request leaves) to
// out. When idle it blocks on in and ctx. It returns
// ctx.Err() when ctx is done, nil when in is closed and the engine is idle,
// and a wrapped error when the executor fails (the engine is then dead).
func (e *Engine) Run(ctx context.Context, in <-chan Command, out chan<- sched.CoreOutputs) (err error) {
	defer func() { // a panic applying a command kills the engine, not the process
		if pe := Recovered(recover()); pe != nil {
			err = e.die(fmt.Errorf("core: run: %w", pe))
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		in = e.drain(in)
		if e.HasWork() {
			outs, err := e.Step(ctx)
			if err != nil {
				return err
			}
			select {
			case out <- outs:
			case <-ctx.Done():
				return ctx.Err()
			}
			// Whoever the send (or an Add's Result) woke waits in this
			// goroutine's Go processor, and Run may be locked to a thread
			// that does not enter the scheduler during the next step (the
			// forward pass of a lowered tensor.Pool spins with OS yields
			// only): hand the woken goroutines to another processor now,
			// or the outputs would reach their streams a step late or, on
			// a busy engine, only when it idles.
			runtime.Gosched()
			if outs.StopCheck {
				// A stop string may have finished a sequence: hear the
				// front end before scheduling it again.
				if in, err = e.awaitStopCheck(ctx, in); err != nil {
					return err
				}
			}
			continue
		}
		if in == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case cmd, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			e.apply(cmd)
		}
	}
}

// awaitStopCheck applies Commands until one with StopChecked arrives. It
// returns nil once in is closed.
func (e *Engine) awaitStopCheck(ctx context.Context, in <-chan Command) (<-chan Command, error) {
	for in != nil {
		select {
		case <-ctx.Done():
			return in, ctx.Err()
		case cmd, ok := <-in:
			if !ok {
				return nil, nil
			}
			e.apply(cmd)
			if cmd.StopChecked {
				return in, nil
			}
		}
	}
	return nil, nil
}

// drain applies every Command already waiting, without blocking. It returns
// nil once in is closed.
func (e *Engine) drain(in <-chan Command) <-chan Command {
	for in != nil {
		select {
		case cmd, ok := <-in:
			if !ok {
				return nil
			}
			e.apply(cmd)
		default:
			return in
		}
	}
	return nil
}

func (e *Engine) apply(cmd Command) {
	if cmd.Add != nil {
		if err := e.AddRequest(*cmd.Add); err != nil {
			e.errOutputs = append(e.errOutputs, sched.CoreOutput{
				ReqID: cmd.Add.ID, FinishReason: stats.FinishError, StopReason: -1,
			})
		}
	}
	if len(cmd.Abort) > 0 {
		e.Abort(cmd.Abort...)
	}
}
