package tensor

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
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

// TestPoolHandOffStress runs many short jobs with short or no spinning, so
// the workers and the caller park and wake in every interleaving; each job
// must be complete when ParallelFor returns (a wake-up meant for an
// earlier job must not end a later one early).
func TestPoolHandOffStress(t *testing.T) {
	saved := spinIters
	defer func() { spinIters = saved }()
	for _, spin := range []int{0, 1, 64, 2000} {
		for _, threads := range []int{2, 3} {
			t.Run(fmt.Sprintf("spin=%d/threads=%d", spin, threads), func(t *testing.T) {
				spinIters = spin
				p := NewPool(threads)
				defer p.Close()
				buf := make([]int, 8)
				for it := 1; it <= 5000; it++ {
					n := 2 + it%5
					p.ParallelFor(n, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							buf[i] = it
						}
					})
					for i := 0; i < n; i++ {
						if buf[i] != it {
							t.Fatalf("job %d: index %d not done when ParallelFor returned", it, i)
						}
					}
				}
			})
		}
	}
}

// TestPoolLateWorkerCannotEndNextJob makes the last worker of a job slow to
// check for a parked caller, after the caller has already seen the job
// finish and started (and parked on) the next one.
func TestPoolLateWorkerCannotEndNextJob(t *testing.T) {
	savedSpin := spinIters
	defer func() { spinIters, testHookJobDone = savedSpin, nil }()
	spinIters = 0
	testHookJobDone = func(g uint64) bool {
		if g%2 == 1 {
			time.Sleep(4 * time.Millisecond) // still here when job g+1 starts
		}
		return true
	}
	p := NewPool(2)
	defer p.Close()
	var done [2]atomic.Int32
	for it := 0; it < 4; it++ {
		done[0].Store(0)
		done[1].Store(0)
		p.ParallelFor(2, func(lo, hi int) {
			switch {
			case it%2 == 0 && lo == 0:
				time.Sleep(time.Millisecond) // job g odd: the worker finishes first
			case it%2 == 1 && lo == 1:
				time.Sleep(2 * time.Millisecond) // job g+1: the worker's part is slow
			}
			done[lo].Store(1)
		})
		if done[0].Load() != 1 || done[1].Load() != 1 {
			t.Fatalf("round %d: ParallelFor returned with parts %d,%d done", it, done[0].Load(), done[1].Load())
		}
	}
}

// TestKeepSpinning: a pool busy-waits spinIters polls; a lowered pool also
// at least lockedSpin long, measured from its first yield, but never more
// than lockedSpinPolls polls (time may stand still, as in a synctest bubble).
func TestKeepSpinning(t *testing.T) {
	savedIters, savedSpin := spinIters, lockedSpin
	defer func() { spinIters, lockedSpin = savedIters, savedSpin }()
	spinIters = 1024
	for _, c := range []struct {
		name string
		nice int
		spin time.Duration
		// polls: the first poll count at which keepSpinning says park.
		polls int
	}{
		{"normal", 0, time.Hour, 1024},
		{"lowered/no-time", 10, 0, 1024 + 255},
		{"lowered/time-left", 10, time.Hour, lockedSpinPolls + 255},
	} {
		t.Run(c.name, func(t *testing.T) {
			lockedSpin = c.spin
			p := &Pool{nice: c.nice}
			var t0 time.Time
			got := -1
			for i := 0; i < 2*lockedSpinPolls; i++ {
				if !p.keepSpinning(i, &t0) {
					got = i
					break
				}
			}
			if got != c.polls {
				t.Fatalf("parks at poll %d, want %d", got, c.polls)
			}
			if (c.nice > 0) == t0.IsZero() {
				t.Errorf("t0 = %v for nice %d: a lowered pool's wait starts at its first yield, a normal one keeps no time", t0, c.nice)
			}
		})
	}
}
