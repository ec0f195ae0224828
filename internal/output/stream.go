package output

import (
	"context"
	"io"
	"sync"

	"govllm/internal/stats"
)

// Stream is one request's coalescing mailbox between the output goroutine
// (Put) and the consumer (Next). Put never blocks: outputs not yet read
// are merged — Delta text, token ids and logprobs are concatenated per
// sequence index and the latest finish information is kept; a Cumulative
// or FinalOnly output replaces the pending one. So a slow reader sees fewer,
// larger deltas and never stalls the engine.
type Stream struct {
	kind Kind
	wake chan struct{} // capacity 1: "something changed"

	mu      sync.Mutex
	pending *RequestOutput
	final   bool  // the finished output was put; later Puts are dropped
	done    bool  // the finished output was returned: Next gives io.EOF
	err     error // set by Fail; returned once pending output is drained
}

// NewStream returns an empty stream merging per kind.
func NewStream(kind Kind) *Stream {
	return &Stream{kind: kind, wake: make(chan struct{}, 1)}
}

// Put hands o to the stream, which takes ownership of it and its slices.
func (s *Stream) Put(o *RequestOutput) {
	s.mu.Lock()
	if s.final || s.err != nil {
		s.mu.Unlock()
		return
	}
	if s.pending == nil || s.kind != Delta {
		s.pending = o
	} else {
		mergeDelta(s.pending, o)
	}
	s.final = o.Finished
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Fail ends the stream with err: Next returns the outputs already put,
// then err. It is a no-op once the finished output was put.
func (s *Stream) Fail(err error) {
	s.mu.Lock()
	if !s.final && s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next blocks until an output is available, the stream ended, or ctx is
// done. After the finished output it returns io.EOF.
func (s *Stream) Next(ctx context.Context) (*RequestOutput, error) {
	for {
		s.mu.Lock()
		if o := s.pending; o != nil {
			s.pending = nil
			s.done = o.Finished
			s.mu.Unlock()
			return o, nil
		}
		done, err := s.done, s.err
		s.mu.Unlock()
		if done {
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// mergeDelta folds the newer delta o into dst.
func mergeDelta(dst, o *RequestOutput) {
	for _, c := range o.Outputs {
		i := 0
		for i < len(dst.Outputs) && dst.Outputs[i].Index != c.Index {
			i++
		}
		if i == len(dst.Outputs) {
			dst.Outputs = append(dst.Outputs, c)
			continue
		}
		d := &dst.Outputs[i]
		d.Text += c.Text
		d.TokenIDs = append(d.TokenIDs, c.TokenIDs...)
		d.Logprobs = append(d.Logprobs, c.Logprobs...)
		if c.Pooled != nil {
			d.Pooled = c.Pooled
		}
		if c.Timings != nil {
			d.Timings = c.Timings
		}
		if c.FinishReason != stats.FinishNone {
			d.FinishReason, d.StopReason = c.FinishReason, c.StopReason
		}
	}
	dst.Finished = o.Finished
	dst.NumCachedTokens = o.NumCachedTokens
}
