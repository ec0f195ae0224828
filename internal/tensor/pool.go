package tensor

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool is a set of persistent worker goroutines. The caller of ParallelFor
// (and of MatMul) takes part in the work, so a pool of n threads starts n-1
// goroutines, once, in NewPool.
//
// A Pool is driven by one goroutine at a time: ParallelFor and MatMul must
// not be called concurrently on the same Pool, nor from inside a function
// that ParallelFor is running. The zero value and nil run everything on the
// calling goroutine. Close stops the workers; a closed Pool runs on the
// caller alone.
//
// Hand-off is a generation counter: workers spin on it briefly after each
// job (so back-to-back kernels of a forward pass cost no wake-up), then park
// on a condition variable. The caller waits for the job the same way. A
// lowered pool (PoolOptions.Nice) spins at least lockedSpin, yielding the
// CPU to the OS rather than its Go processor (see keepSpinning and yield).
type Pool struct {
	n int

	// job, published before gen is bumped.
	fn    func(lo, hi int)
	total int
	parts int

	gen      atomic.Uint64 // bumped once per job; workers run a job when it changes
	pending  atomic.Int32  // workers still running the current job
	sleepers atomic.Int32  // workers parked on cond
	closed   atomic.Bool

	mu   sync.Mutex
	cond *sync.Cond

	parked atomic.Uint64 // the job the caller is parked on (0: not parked)
	wake   chan struct{} // wakes the parked caller

	wg sync.WaitGroup

	// nice > 0: workers and callers run on locked threads of lowered
	// priority (see PoolOptions); callerTID is the caller thread lowered.
	nice      int
	callerTID int

	// Q8_0 activation scratch, reused by MatMul.
	xq []int8
	xd []float32
	xu []byte
	xs []uint32 // packed Q8_0: per row and block, scale and offset correction
	xc []int32  // packed Q8_0: per four activation values, −128·Σ (q8lanes.go)
	// F32 GEMM scratch, reused by MatMul: x packed for the kernel, and
	// one buffer of parked accumulators per thread.
	xf   []float32
	accs [][]float32
	// Packed Q4_0 tiles: one buffer of unpacked weights per thread.
	q4w [][]byte
	// Block and K formats: the activations quantized (quantizeAct), their
	// corrections (scratch32), a Stacked matrix's part outputs.
	act  actRows
	xaux []int32
	stk  []float32

	// MatMul's current job and its methods as func values, bound once.
	mm                           mmJob
	f32Fn, packFn, quantFn, q8Fn func(lo, hi int)
	f32pFn, f32pPackFn           func(lo, hi int)
}

// spinIters bounds the busy-wait of workers and caller before they park.
// At a few ns per iteration this is tens of microseconds: long enough to
// cover the gap between two kernels of one forward pass. Tests lower it to
// exercise parking.
var spinIters = 20000

// lockedSpin is the least time a lowered pool's threads (PoolOptions.Nice)
// busy-wait before they park. Their polls are cheaper to stretch (the
// yields between them give the CPU away, see yield) and their wake-ups
// dearer (a futex wake-up of a low-priority thread, which waits behind the
// process's other threads): with spinIters alone they parked between the
// steps of a served decode batch and left the CPU idle 7 % of the time.
var lockedSpin = time.Millisecond

// keepSpinning is called before each poll of a busy-wait, i counting the
// polls so far from 0: it yields every 256 polls and reports whether to
// poll again (false: park). t0 is the wait's start, which a lowered pool
// sets on its first yield.
func (p *Pool) keepSpinning(i int, t0 *time.Time) bool {
	if i&255 != 255 {
		return i < spinIters || p.nice > 0
	}
	p.yield()
	if p.nice > 0 && t0.IsZero() {
		*t0 = time.Now()
	}
	// The cap on polls bounds the wait where time does not pass while
	// goroutines spin (a testing/synctest bubble).
	return i < spinIters || p.nice > 0 && i < lockedSpinPolls && time.Since(*t0) < lockedSpin
}

// lockedSpinPolls caps a lowered pool's busy-wait in polls (see
// keepSpinning): a few milliseconds of them, at least lockedSpin here.
const lockedSpinPolls = 1 << 22

// testHookJobDone, when set (by tests, before NewPool), runs in the worker
// that finished job g last, before it looks at parked; it returns true.
var testHookJobDone func(g uint64) bool

// NewPool starts a pool of n workers (n ≤ 1 means the caller only).
func NewPool(n int) *Pool { return newPool(n, 0) }

func newPool(n, nice int) *Pool {
	p := &Pool{n: max(n, 1), wake: make(chan struct{}, 1), nice: nice}
	p.cond = sync.NewCond(&p.mu)
	p.f32Fn, p.packFn, p.quantFn, p.q8Fn = p.mm.f32Panels, p.mm.packTiles, p.mm.quantRows, p.mm.q8Panels
	p.f32pFn, p.f32pPackFn = p.mm.fp.panels, p.mm.fp.packTiles
	for w := 1; w < p.n; w++ {
		p.wg.Add(1)
		go p.worker(w)
	}
	return p
}

// Threads reports the pool's parallelism.
func (p *Pool) Threads() int {
	if p == nil || p.n < 1 || p.closed.Load() {
		return 1
	}
	return p.n
}

// Close stops the workers and waits for them to exit. It is idempotent.
func (p *Pool) Close() {
	if p == nil || p.n <= 1 || p.closed.Swap(true) {
		return
	}
	p.mu.Lock()
	p.gen.Add(1)
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// part returns the w-th of parts near-equal slices of [0,total).
func part(total, parts, w int) (lo, hi int) {
	return total * w / parts, total * (w + 1) / parts
}

func (p *Pool) worker(w int) {
	defer p.wg.Done()
	if p.nice > 0 {
		p.lowerSelf(0)
	}
	var seen uint64 // gen is 0 until the first job, which may come before this goroutine runs
	for {
		g := p.waitGen(seen)
		if p.closed.Load() {
			return
		}
		seen = g
		if w < p.parts {
			lo, hi := part(p.total, p.parts, w)
			if lo < hi {
				p.fn(lo, hi)
			}
		}
		if p.pending.Add(-1) == 0 && (testHookJobDone == nil || testHookJobDone(g)) &&
			p.parked.CompareAndSwap(g, 0) {
			p.wake <- struct{}{}
		}
	}
}

// waitGen spins, then parks, until gen differs from seen.
func (p *Pool) waitGen(seen uint64) uint64 {
	var t0 time.Time
	for i := 0; p.keepSpinning(i, &t0); i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
	}
	p.mu.Lock()
	p.sleepers.Add(1)
	for p.gen.Load() == seen {
		p.cond.Wait()
	}
	p.sleepers.Add(-1)
	p.mu.Unlock()
	return p.gen.Load()
}

// ParallelFor splits [0,n) into one contiguous range per thread and calls fn
// on each non-empty range, the caller running the first. It returns when all
// calls have returned. fn must be safe to run concurrently on disjoint ranges.
func (p *Pool) ParallelFor(n int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if p != nil && p.nice > 0 {
		p.callerTID = p.lowerSelf(p.callerTID)
	}
	threads := p.Threads()
	if threads == 1 || n == 1 {
		fn(0, n)
		return
	}
	parts := min(threads, n)
	p.fn, p.total, p.parts = fn, n, parts
	p.pending.Store(int32(p.n - 1))
	g := p.gen.Add(1)
	if p.sleepers.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	lo, hi := part(n, parts, 0)
	fn(lo, hi)
	p.waitDone(g)
	p.fn = nil
}

// waitDone spins, then parks, until every worker has finished job g.
//
// Parking publishes g in parked; the worker that brings pending to zero
// wakes the caller only if it can swap parked from its own job's g to 0. A
// worker of an earlier job that is late to look at parked (the caller saw
// pending reach zero while spinning and started the next job) therefore
// cannot wake the caller for a job that is still running.
func (p *Pool) waitDone(g uint64) {
	var t0 time.Time
	for i := 0; p.keepSpinning(i, &t0); i++ {
		if p.pending.Load() == 0 {
			return
		}
	}
	p.parked.Store(g)
	if p.pending.Load() == 0 && p.parked.CompareAndSwap(g, 0) {
		return // finished before we parked; no wake-up was sent
	}
	<-p.wake
}
