package httpapi

import (
	"context"
	"errors"
	"io"
	"sync"

	"govllm/internal/output"
)

// fanIn merges the output streams of one HTTP request's engine requests
// (one per prompt) into one sequence, in the order outputs arrive. It owns
// their context: a failing stream, or close, cancels it, which aborts every
// engine request still running. A single stream is read directly; with
// several, one goroutine per stream forwards its outputs (each holds at
// most one output while the streams keep coalescing, so a slow client
// never stalls the engine).
type fanIn struct {
	ctx     context.Context
	cancel  context.CancelFunc
	streams []*output.Stream
	ch      chan fanItem // from the forwarding goroutines (several streams)
	live    int          // streams not yet at their end
	wg      sync.WaitGroup
}

// fanItem is one stream's next output, or its end (err io.EOF), or its
// failure.
type fanItem struct {
	prompt int
	out    *output.RequestOutput
	err    error
}

func newFanIn(ctx context.Context, cancel context.CancelFunc, streams []*output.Stream) *fanIn {
	f := &fanIn{ctx: ctx, cancel: cancel, streams: streams, live: len(streams)}
	if len(streams) == 1 {
		return f
	}
	f.ch = make(chan fanItem)
	f.wg.Add(len(streams))
	for i, st := range streams {
		go f.forward(i, st)
	}
	return f
}

// forward sends stream i's outputs, then its end or failure, until the
// context is done.
func (f *fanIn) forward(i int, st *output.Stream) {
	defer f.wg.Done()
	for {
		o, err := st.Next(f.ctx)
		select {
		case f.ch <- fanItem{prompt: i, out: o, err: err}:
		case <-f.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// next returns the next output and the index of its prompt; io.EOF once
// every stream ended. Any other error (a failed stream, or the context's
// error when the client left) has cancelled the context.
func (f *fanIn) next() (int, *output.RequestOutput, error) {
	if f.ch == nil {
		o, err := f.streams[0].Next(f.ctx)
		if err != nil && !errors.Is(err, io.EOF) {
			f.cancel()
		}
		return 0, o, err
	}
	for f.live > 0 {
		select {
		case it := <-f.ch:
			switch {
			case errors.Is(it.err, io.EOF):
				f.live--
				continue
			case it.err != nil:
				f.cancel()
				return it.prompt, nil, it.err
			}
			return it.prompt, it.out, nil
		case <-f.ctx.Done():
			f.cancel()
			return 0, nil, f.ctx.Err()
		}
	}
	return 0, nil, io.EOF
}

// collect reads every stream to its end and returns each prompt's last
// (final) output, in prompt order.
func (f *fanIn) collect() ([]*output.RequestOutput, error) {
	outs := make([]*output.RequestOutput, len(f.streams))
	for {
		i, o, err := f.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		outs[i] = o
	}
	for _, o := range outs {
		if o == nil {
			return nil, errors.New("httpapi: stream ended without output")
		}
	}
	return outs, nil
}

// close cancels the context (aborting whatever still runs; finished
// requests are unaffected) and waits for the forwarding goroutines.
func (f *fanIn) close() {
	f.cancel()
	f.wg.Wait()
}
