package tensor

import (
	"sync/atomic"
	"testing"
)

func TestNewPoolWithRejectsBadNice(t *testing.T) {
	for _, nice := range []int{-1, 20} {
		p, err := NewPoolWith(2, PoolOptions{Nice: nice})
		if err == nil {
			t.Errorf("Nice %d: no error", nice)
		}
		if p == nil || p.Threads() != 2 {
			t.Fatalf("Nice %d: want a working 2-thread pool despite the error, got %v", nice, p)
		}
		if p.nice != 0 {
			t.Errorf("Nice %d: pool kept nice %d, want 0 (normal priority)", nice, p.nice)
		}
		p.Close()
	}
}

func TestPoolWithNiceCoversEachIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		p, err := NewPoolWith(threads, PoolOptions{Nice: 3})
		if err == ErrNiceUnsupported {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { // the caller's thread is lowered and kept: use a goroutine that ends
			defer close(done)
			for _, n := range []int{1, 2, 7, 100} {
				counts := make([]atomic.Int32, n)
				for rep := 0; rep < 3; rep++ {
					p.ParallelFor(n, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							counts[i].Add(1)
						}
					})
				}
				for i := range counts {
					if c := counts[i].Load(); c != 3 {
						t.Errorf("threads=%d n=%d: index %d ran %d times, want 3", threads, n, i, c)
						return
					}
				}
			}
		}()
		<-done
		p.Close()
	}
}
