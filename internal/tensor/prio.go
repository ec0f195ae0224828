package tensor

import (
	"errors"
	"fmt"
	"runtime"
)

// PoolOptions tune a Pool beyond its thread count.
type PoolOptions struct {
	// Nice, when positive, lowers the OS scheduling priority of the threads
	// that run the pool's work by that many nice steps (1–19), so that any
	// other runnable thread of the process — an HTTP handler, a /metrics
	// scrape — preempts the forward pass at once instead of waiting for a
	// time slice to end. A lower priority costs nothing on an idle machine:
	// the threads still run flat out when no one else wants the CPU.
	//
	// Every worker locks itself to its OS thread (runtime.LockOSThread) and
	// lowers that thread's priority when it starts; so does each goroutine
	// that calls ParallelFor or MatMul, on its first call: it stays locked to
	// its (now lower-priority) thread until it exits, when the runtime
	// discards the thread. No lowered thread ever runs other goroutines.
	//
	// While they spin between jobs such threads give their CPU away
	// (sched_yield) every 256 polls, so that a runnable thread of the
	// process is not kept waiting by a spin, but not their Go processor (a
	// locked goroutine's Gosched costs two context switches): the spare Go
	// processors run the other goroutines, and a caller that wakes some
	// (core.Run, once per step) yields them its processor itself.
	//
	// Linux only (setpriority on the thread id); elsewhere NewPoolWith
	// reports ErrNiceUnsupported and the pool runs at normal priority.
	Nice int
}

// ErrNiceUnsupported is returned by NewPoolWith for a positive Nice on a
// system where a thread's priority cannot be lowered on its own.
var ErrNiceUnsupported = errors.New("tensor: lowering a thread's priority is not supported on " + runtime.GOOS)

// NewPoolWith is NewPool with options. On an error (a Nice the system
// refuses) it still returns a working pool, at normal priority.
func NewPoolWith(n int, o PoolOptions) (*Pool, error) {
	if o.Nice < 0 || o.Nice > 19 {
		return NewPool(n), fmt.Errorf("tensor: pool nice %d outside 0–19", o.Nice)
	}
	if o.Nice > 0 {
		// Try it on a throwaway thread first: the workers and callers would
		// hit the same refusal, and this one can report it.
		if err := probeNice(o.Nice); err != nil {
			return NewPool(n), err
		}
	}
	return newPool(n, o.Nice), nil
}

// probeNice lowers the priority of a fresh locked thread, which the runtime
// discards when the goroutine exits without unlocking.
func probeNice(nice int) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		_, err := lowerThreadPriority(nice)
		errc <- err
	}()
	return <-errc
}

// lowerSelf locks the calling goroutine to its thread and lowers the
// thread's priority by p.nice, once per thread: tid is the thread it has
// already lowered (0: none). Errors were ruled out by the probe in
// NewPoolWith; a late one leaves the thread at its priority.
func (p *Pool) lowerSelf(tid int) int {
	cur := threadID()
	if cur == tid {
		return tid
	}
	runtime.LockOSThread()
	lowerThreadPriority(p.nice)
	return cur
}

// yield lets other goroutines run on this Go processor or, for a pool of
// lowered priority, other threads on this CPU.
//
// A lowered pool's threads are locked, and a locked goroutine's Gosched is
// not cheap: its thread hands the Go processor to another thread (waking
// one) and sleeps until the goroutine is scheduled again, which takes the
// processor back — two futex wake-ups and context switches per yield,
// measured at a fifth of a served decode step's CPU. Such threads give the
// CPU away at the OS level only; the spare Go processors (see the serve
// command's --spare-procs) run the other goroutines meanwhile.
func (p *Pool) yield() {
	if p.nice > 0 {
		osYield()
		return
	}
	runtime.Gosched()
}
