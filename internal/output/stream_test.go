package output

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"govllm/internal/sampling"
	"govllm/internal/stats"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func delta(idx int, text string, toks []int32, fin stats.FinishReason, finished bool) *RequestOutput {
	c := CompletionOutput{Index: idx, Text: text, TokenIDs: toks, FinishReason: fin}
	if len(toks) > 0 {
		c.Logprobs = []sampling.Logprobs{{Sampled: sampling.TokenLogprob{Token: toks[0]}}}
	}
	return &RequestOutput{RequestID: "r", Outputs: []CompletionOutput{c}, Finished: finished}
}

func TestStreamCoalescesDeltas(t *testing.T) {
	s := NewStream(Delta)
	s.Put(delta(0, "he", []int32{1}, 0, false))
	s.Put(delta(1, "x", []int32{9}, 0, false))
	s.Put(delta(0, "llo", []int32{2}, stats.FinishLength, false))
	s.Put(delta(1, "y", []int32{8}, stats.FinishStop, true))
	s.Put(delta(0, "late", []int32{3}, 0, false)) // after the finished output: dropped
	o, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Outputs) != 2 || !o.Finished {
		t.Fatalf("merged %+v", o)
	}
	c0, c1 := o.Outputs[0], o.Outputs[1]
	if c0.Index != 0 || c0.Text != "hello" || !slices.Equal(c0.TokenIDs, []int32{1, 2}) || len(c0.Logprobs) != 2 || c0.FinishReason != stats.FinishLength {
		t.Errorf("seq 0: %+v", c0)
	}
	if c1.Index != 1 || c1.Text != "xy" || !slices.Equal(c1.TokenIDs, []int32{9, 8}) || c1.FinishReason != stats.FinishStop {
		t.Errorf("seq 1: %+v", c1)
	}
	for range 2 {
		if _, err := s.Next(context.Background()); err != io.EOF {
			t.Errorf("after the final output: %v, want io.EOF", err)
		}
	}
}

func TestStreamCumulativeReplaces(t *testing.T) {
	s := NewStream(Cumulative)
	s.Put(delta(0, "he", []int32{1}, 0, false))
	s.Put(delta(0, "hello", []int32{1, 2}, 0, false))
	o, _ := s.Next(context.Background())
	if o.Outputs[0].Text != "hello" {
		t.Errorf("cumulative: %q", o.Outputs[0].Text)
	}
}

func TestStreamNextWaitsAndCancels(t *testing.T) {
	s := NewStream(Delta)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Next: %v", err)
	}
	// A reader blocked in Next wakes up for a Put from another goroutine
	// and reads everything in order until EOF.
	var wg sync.WaitGroup
	var got []string
	var final error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			o, err := s.Next(context.Background())
			if err != nil {
				final = err
				return
			}
			got = append(got, o.Outputs[0].Text)
		}
	}()
	want := ""
	for i := range 100 {
		txt := string(rune('a' + i%26))
		want += txt
		s.Put(delta(0, txt, []int32{int32(i)}, 0, i == 99))
	}
	wg.Wait()
	if final != io.EOF || strings.Join(got, "") != want {
		t.Errorf("reader got %q (%v), want %q then EOF", strings.Join(got, ""), final, want)
	}
}

func TestStreamFail(t *testing.T) {
	boom := errors.New("engine died")
	s := NewStream(Delta)
	s.Put(delta(0, "a", []int32{1}, 0, false))
	s.Fail(boom)
	s.Put(delta(0, "b", []int32{2}, 0, false)) // dropped after Fail
	if o, err := s.Next(context.Background()); err != nil || o.Outputs[0].Text != "a" {
		t.Fatalf("pending output before the error: %v %v", o, err)
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, boom) {
		t.Errorf("got %v, want %v", err, boom)
	}
	// Fail after the finished output changes nothing.
	s = NewStream(Delta)
	s.Put(delta(0, "a", nil, stats.FinishStop, true))
	s.Fail(boom)
	s.Next(context.Background())
	if _, err := s.Next(context.Background()); err != io.EOF {
		t.Errorf("got %v, want io.EOF", err)
	}
}
