package httpapi

import (
	"context"
	"net/http"
	"sync"

	"govllm/internal/apierr"
	"govllm/internal/llm"
	"govllm/internal/output"
)

// errShuttingDown refuses generation requests while the server drains and
// ends those still running when the drain's time is over: 503, as an error
// envelope (or, in a stream, an error event followed by [DONE]).
var errShuttingDown = &apierr.Error{Status: http.StatusServiceUnavailable, Msg: "the server is shutting down"}

// drain tracks the generation requests in flight and their engine streams,
// so that a shutdown can stop admitting, wait for them, and end the rest
// with an error instead of cutting their connections.
type drain struct {
	mu       sync.Mutex
	draining bool                    // no new generation request is admitted
	ended    bool                    // streams still open were failed; new ones fail at once
	inflight int                     // generation handlers running
	idle     chan struct{}           // closed when draining and inflight is 0
	streams  map[*output.Stream]bool // engine streams of the requests in flight
}

// enter admits one generation request; false while draining.
func (d *drain) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.inflight++
	return true
}

// leave is the end of a request enter admitted.
func (d *drain) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	if d.draining && d.inflight == 0 {
		close(d.idle)
	}
}

// isDraining reports whether a shutdown has begun.
func (d *drain) isDraining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

// start marks the shutdown and returns a channel closed once no admitted
// request is left.
func (d *drain) start() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.draining {
		d.draining = true
		d.idle = make(chan struct{})
		if d.inflight == 0 {
			close(d.idle)
		}
	}
	return d.idle
}

// track registers st until ctx (the request's) ends; after end, st fails
// at once.
func (d *drain) track(ctx context.Context, st *output.Stream) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		st.Fail(errShuttingDown)
		return
	}
	if d.streams == nil {
		d.streams = map[*output.Stream]bool{}
	}
	d.streams[st] = true
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		delete(d.streams, st)
		d.mu.Unlock()
	})
}

// end fails every tracked stream with errShuttingDown.
func (d *drain) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = true
	for st := range d.streams {
		st.Fail(errShuttingDown)
	}
}

// drainEngine is the server's view of the engine: every stream it starts
// is tracked by the drain.
type drainEngine struct {
	Engine
	d *drain
}

func (e drainEngine) Submit(ctx context.Context, pr *llm.Prepared) (*output.Stream, error) {
	st, err := e.Engine.Submit(ctx, pr)
	if err == nil {
		e.d.track(ctx, st)
	}
	return st, err
}

// admit wraps a generation handler: while the server drains, a new request
// gets 503 with Retry-After (a balancer retries it on another replica).
func (s *Server) admit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.drain.enter() {
			w.Header().Set("Retry-After", "1")
			s.writeErr(w, r, errShuttingDown)
			return
		}
		defer s.drain.leave()
		h(w, r)
	}
}

// Drain begins the shutdown: from now on new generation requests get 503
// with Retry-After and /health answers 503 "draining" (/ping stays 200).
// It waits until the generation requests in flight have finished, or ctx
// is done; then it ends the rest — a stream with an error event and
// [DONE], a non-streamed request with a 503 — and returns ctx's error.
// The handlers of ended requests may still be writing when it returns.
func (s *Server) Drain(ctx context.Context) error {
	idle := s.drain.start()
	select {
	case <-idle:
		return nil
	default:
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		s.drain.end()
		return ctx.Err()
	}
}
