package llm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"govllm/internal/core"
	"govllm/internal/output"
	"govllm/internal/sched"
	"govllm/internal/tokenizer"
)

// AsyncEngine is the serving front end (vLLM AsyncLLM). Generate may be
// called from many goroutines. Two goroutines run behind it: the core's Run
// loop, and the output loop, which owns the Processor, runs the shared seam
// for every step, delivers into the per-request Streams, and sends
// additions and aborts to the core without ever blocking on it.
type AsyncEngine struct {
	*Preparer // Prepare, Tokenizer, MaxModelLen
	core      *core.Engine
	tok       *tokenizer.Tokenizer

	addCh    chan addMsg
	cancelCh chan string
	coreIn   chan core.Command
	coreOut  chan sched.CoreOutputs

	stopCore  context.CancelFunc
	runDone   chan struct{} // closed when core.Run returned
	done      chan struct{} // closed when the output loop exited
	closing   chan struct{} // closed by Close
	closeOnce sync.Once

	mu      sync.Mutex
	err     error // why the loop ended (ErrClosed or an ErrEngineDead wrap)
	runErr  error // core.Run's return value
	p       pipeline
	streams map[string]*live // owned by the output loop
}

type addMsg struct {
	pr     *Prepared
	ctx    context.Context
	stream *output.Stream
	reply  chan error
}

// live is an in-flight request as the output loop sees it.
type live struct {
	stream *output.Stream
	stop   func() bool // unregisters the ctx cancellation hook
}

// coreOutBuffer lets the core run a few steps ahead of output processing;
// coreInBuffer holds the commands the core applies before its next step.
const (
	coreOutBuffer = 8
	coreInBuffer  = 1024
)

// NewAsyncEngine starts the two goroutines over c; Close stops them.
// Every logger receives every step's statistics from the output loop.
func NewAsyncEngine(cfg Config, c *core.Engine, tok *tokenizer.Tokenizer, loggers ...StatLogger) (*AsyncEngine, error) {
	if c == nil || tok == nil {
		return nil, errors.New("llm: NewAsyncEngine needs a core and a tokenizer")
	}
	pp, err := newPreparer(cfg, c, tok)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &AsyncEngine{
		Preparer: pp, core: c, tok: tok,
		addCh:    make(chan addMsg),
		cancelCh: make(chan string),
		coreIn:   make(chan core.Command, coreInBuffer),
		coreOut:  make(chan sched.CoreOutputs, coreOutBuffer),
		stopCore: cancel,
		runDone:  make(chan struct{}),
		done:     make(chan struct{}),
		closing:  make(chan struct{}),
		p:        newPipeline(tok, loggers),
		streams:  map[string]*live{},
	}
	a.p.always = cfg.RequestStats
	go func() {
		defer close(a.runDone)
		err := c.Run(ctx, a.coreIn, a.coreOut)
		a.mu.Lock()
		a.runErr = err
		a.mu.Unlock()
	}()
	go a.outputLoop()
	return a, nil
}

// Err is nil while the engine serves; ErrClosed after Close; an error
// wrapping ErrEngineDead once the engine loop died.
func (a *AsyncEngine) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Generate prepares and submits one request.
func (a *AsyncEngine) Generate(ctx context.Context, req Request) (*output.Stream, error) {
	prs, err := a.Prepare(req)
	if err != nil {
		return nil, err
	}
	return a.Submit(ctx, prs[0])
}

// Submit starts a prepared request and returns its output stream.
// Cancelling ctx aborts the request: the core frees its KV blocks and the
// request is counted as finished with reason abort. Errors:
// output.ErrDuplicateID, ErrClosed, or ErrEngineDead (wrapped).
func (a *AsyncEngine) Submit(ctx context.Context, pr *Prepared) (*output.Stream, error) {
	if err := a.Err(); err != nil {
		return nil, err
	}
	m := addMsg{pr: pr, ctx: ctx, stream: output.NewStream(pr.out.Kind), reply: make(chan error, 1)}
	select {
	case a.addCh <- m:
	case <-a.done:
		return nil, a.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var err error
	select {
	case err = <-m.reply:
	case <-a.done: // the output loop stopped; it may have answered first
		select {
		case err = <-m.reply:
		default:
			return nil, a.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	return m.stream, nil
}

// Close stops both goroutines. Requests still in flight end with a final
// abort output (not counted in the statistics). Close is idempotent.
func (a *AsyncEngine) Close() error {
	a.closeOnce.Do(func() {
		close(a.closing)
		a.stopCore()
	})
	<-a.done
	return nil
}

// Done is closed when the engine stopped serving: after Close, or when it
// died (Err tells which).
func (a *AsyncEngine) Done() <-chan struct{} { return a.done }

// outputLoop owns the Processor and the streams. It never blocks on the
// core: commands wait in a queue and move to the core's buffered input as
// room allows, so every request submitted during a step joins the next one.
// A panic here (detokenizing, stop strings, a stat logger) kills the engine,
// not the process: see die.
func (a *AsyncEngine) outputLoop() {
	defer close(a.done)
	defer func() {
		if pe := core.Recovered(recover()); pe != nil {
			a.die(fmt.Errorf("output loop: %w", pe))
		}
	}()
	var pending []core.Command
	for {
	flush:
		for len(pending) > 0 {
			select {
			case a.coreIn <- pending[0]:
				pending[0] = core.Command{}
				pending = pending[1:]
			default:
				break flush
			}
		}
		var in chan core.Command
		var next core.Command
		if len(pending) > 0 {
			in, next = a.coreIn, pending[0]
		}
		select {
		case in <- next:
			pending[0] = core.Command{}
			pending = pending[1:]
		case co := <-a.coreOut:
			pending = a.handle(&co, pending)
		case m := <-a.addCh:
			pending = a.add(m, pending)
		case id := <-a.cancelCh:
			if ids := a.p.proc.Abort(id); len(ids) > 0 {
				pending = append(pending, core.Command{Abort: ids})
			}
		case <-a.runDone:
			a.shutdown()
			return
		}
	}
}

func (a *AsyncEngine) handle(co *sched.CoreOutputs, pending []core.Command) []core.Command {
	outs, stops := a.p.handle(co)
	for _, o := range outs {
		l, ok := a.streams[o.RequestID]
		if !ok {
			continue
		}
		l.stream.Put(o)
		if o.Finished {
			l.stop()
			delete(a.streams, o.RequestID)
		}
	}
	if len(stops) > 0 || co.StopCheck {
		pending = append(pending, core.Command{Abort: stops, StopChecked: co.StopCheck})
	}
	return pending
}

func (a *AsyncEngine) add(m addMsg, pending []core.Command) []core.Command {
	id := m.pr.out.ID
	if _, err := a.p.proc.AddRequest(m.pr.out); err != nil {
		m.reply <- err
		return pending
	}
	stop := context.AfterFunc(m.ctx, func() {
		select {
		case a.cancelCh <- id:
		case <-a.done:
		}
	})
	a.streams[id] = &live{stream: m.stream, stop: stop}
	for i := range m.pr.engine {
		pending = append(pending, core.Command{Add: &m.pr.engine[i]})
	}
	m.reply <- nil
	return pending
}

// shutdown runs once core.Run returned: on Close, open streams end with an
// abort output; if the core died, they fail with the cause.
func (a *AsyncEngine) shutdown() {
	for { // outputs the core produced before it returned
		select {
		case co := <-a.coreOut:
			a.handle(&co, nil)
			continue
		default:
		}
		break
	}
	var err error
	select {
	case <-a.closing:
		err = ErrClosed
	default:
		a.mu.Lock()
		cause := a.runErr
		a.mu.Unlock()
		err = fmt.Errorf("%w: %w", ErrEngineDead, cause)
	}
	a.mu.Lock()
	a.err = err
	a.mu.Unlock()
	abortOuts := a.p.proc.AbortAll()
	for _, o := range abortOuts {
		if l, ok := a.streams[o.RequestID]; ok && err == ErrClosed {
			l.stream.Put(o)
		}
	}
	for id, l := range a.streams {
		l.stop()
		l.stream.Fail(err) // no-op for streams that got their final output
		delete(a.streams, id)
	}
}

// die ends the engine after a panic in the output loop: the core is
// stopped, and every open stream fails with the cause (the Processor's
// state is not trusted any more, so nothing more is processed).
func (a *AsyncEngine) die(cause error) {
	a.stopCore()
	<-a.runDone
	err := fmt.Errorf("%w: %w", ErrEngineDead, cause)
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.mu.Unlock()
	for id, l := range a.streams {
		l.stop()
		l.stream.Fail(err)
		delete(a.streams, id)
	}
}
