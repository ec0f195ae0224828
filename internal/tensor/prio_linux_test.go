package tensor

import (
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// threadNice is the calling thread's nice value.
func threadNice(t *testing.T) int {
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - prio
}

// onThrowawayThread runs f on a goroutine locked to its thread, which the
// runtime discards when f returns (the goroutine exits still locked).
func onThrowawayThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		f()
	}()
	<-done
}

func TestLowerThreadPriority(t *testing.T) {
	var base int
	onThrowawayThread(func() { base = threadNice(t) })
	tests := []struct{ delta, want int }{
		{0, base}, {1, base + 1}, {5, base + 5}, {19, 19}, {40, 19},
	}
	for _, tt := range tests {
		onThrowawayThread(func() {
			got, err := lowerThreadPriority(tt.delta)
			if err != nil {
				t.Errorf("delta %d: %v", tt.delta, err)
				return
			}
			want := min(tt.want, 19)
			if got != want || threadNice(t) != want {
				t.Errorf("delta %d: returned nice %d, thread at %d; want %d", tt.delta, got, threadNice(t), want)
			}
		})
	}
	// The process's other threads keep their priority.
	if n := threadNice(t); n != base {
		t.Errorf("test thread nice %d, want %d", n, base)
	}
}

// TestPoolNiceLowersWorkThreadsOnce checks that every range of a job runs on
// a thread lowered by exactly Nice (once, however many jobs it ran), and
// that the pool's caller is lowered too.
func TestPoolNiceLowersWorkThreadsOnce(t *testing.T) {
	var base int
	onThrowawayThread(func() { base = threadNice(t) })
	const nice = 4
	want := min(base+nice, 19)
	p, err := NewPoolWith(3, PoolOptions{Nice: nice})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	seen := map[int]int{} // thread id → nice
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			p.ParallelFor(3, func(lo, hi int) {
				tid, n := unix.Gettid(), threadNice(t)
				mu.Lock()
				seen[tid] = n
				mu.Unlock()
			})
		}
		if n := threadNice(t); n != want {
			t.Errorf("caller thread at nice %d, want %d", n, want)
		}
	}()
	<-done
	if len(seen) != 3 {
		t.Errorf("ranges ran on %d threads, want 3 (the caller and two locked workers)", len(seen))
	}
	for tid, n := range seen {
		if n != want {
			t.Errorf("thread %d ran at nice %d, want %d", tid, n, want)
		}
	}
}
