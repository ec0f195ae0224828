package tensor

import (
	"sync/atomic"
	"testing"
)

func TestParallelForCoversEachIndexOnce(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 3, 5} {
		p := NewPool(threads)
		for _, n := range []int{0, 1, 2, 3, 4, 7, 100, 1001} {
			counts := make([]atomic.Int32, n)
			for rep := 0; rep < 3; rep++ {
				p.ParallelFor(n, func(lo, hi int) {
					if lo >= hi {
						t.Errorf("threads=%d n=%d: empty range [%d,%d)", threads, n, lo, hi)
					}
					for i := lo; i < hi; i++ {
						counts[i].Add(1)
					}
				})
			}
			for i := range counts {
				if c := counts[i].Load(); c != 3 {
					t.Fatalf("threads=%d n=%d: index %d ran %d times, want 3", threads, n, i, c)
				}
			}
		}
		p.Close()
		p.Close() // idempotent
	}
}

func TestParallelForUsesWorkers(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var calls atomic.Int32
	p.ParallelFor(2, func(lo, hi int) { calls.Add(1) })
	if calls.Load() != 2 {
		t.Fatalf("2 threads, n=2: %d calls, want 2", calls.Load())
	}
	if p.Threads() != 2 {
		t.Fatalf("Threads() = %d, want 2", p.Threads())
	}
}

func TestPoolNilAndClosed(t *testing.T) {
	var nilPool *Pool
	var zero Pool
	closed := NewPool(3)
	closed.Close()
	for name, p := range map[string]*Pool{"nil": nilPool, "zero": &zero, "closed": closed} {
		t.Run(name, func(t *testing.T) {
			if p.Threads() != 1 {
				t.Fatalf("Threads() = %d, want 1", p.Threads())
			}
			sum := 0
			p.ParallelFor(10, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					sum += i
				}
			})
			if sum != 45 {
				t.Fatalf("sum = %d, want 45", sum)
			}
			w := &Mat{Rows: 3, Cols: 2, Type: F32, F32: []float32{1, 0, 0, 1, 1, 1}}
			out := make([]float32, 3)
			p.MatMul(out, []float32{2, 3}, 1, w)
			if out[0] != 2 || out[1] != 3 || out[2] != 5 {
				t.Fatalf("MatMul = %v, want [2 3 5]", out)
			}
		})
	}
}

// TestPoolParksAndWakes lets the workers park between jobs.
func TestPoolParksAndWakes(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for rep := 0; rep < 3; rep++ {
		for p.sleepers.Load() == 0 {
			// Wait for the worker's spin budget to run out.
			p.ParallelFor(1, func(lo, hi int) {})
		}
		var n atomic.Int32
		p.ParallelFor(8, func(lo, hi int) { n.Add(int32(hi - lo)) })
		if n.Load() != 8 {
			t.Fatalf("rep %d: covered %d of 8", rep, n.Load())
		}
	}
}
