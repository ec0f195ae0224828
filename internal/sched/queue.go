package sched

import "container/heap"

// waitQueue is the waiting queue: new and preempted requests.
type waitQueue interface {
	Len() int
	Peek() *Request
	Pop() *Request
	// Push adds a new request.
	Push(r *Request)
	// PushFront re-adds a preempted request: FCFS puts it first, the
	// priority queue orders it by priority as usual.
	PushFront(r *Request)
	Remove(r *Request) bool
	Each(func(*Request))
}

func newWaitQueue(p Policy) waitQueue {
	if p == Priority {
		return &priorityQueue{}
	}
	return &fcfsQueue{}
}

// fcfsQueue is a slice deque.
type fcfsQueue struct{ q []*Request }

func (f *fcfsQueue) Len() int { return len(f.q) }

func (f *fcfsQueue) Peek() *Request { return f.q[0] }

func (f *fcfsQueue) Pop() *Request {
	r := f.q[0]
	f.q[0] = nil
	f.q = f.q[1:]
	return r
}

func (f *fcfsQueue) Push(r *Request) { f.q = append(f.q, r) }

func (f *fcfsQueue) PushFront(r *Request) {
	f.q = append(f.q, nil)
	copy(f.q[1:], f.q)
	f.q[0] = r
}

func (f *fcfsQueue) Remove(r *Request) bool {
	for i, x := range f.q {
		if x == r {
			copy(f.q[i:], f.q[i+1:])
			f.q[len(f.q)-1] = nil
			f.q = f.q[:len(f.q)-1]
			return true
		}
	}
	return false
}

func (f *fcfsQueue) Each(fn func(*Request)) {
	for _, r := range f.q {
		fn(r)
	}
}

// priorityQueue is a min-heap by Request.before.
type priorityQueue struct{ h reqHeap }

type reqHeap []*Request

func (h reqHeap) Len() int           { return len(h) }
func (h reqHeap) Less(i, j int) bool { return h[i].before(h[j]) }
func (h reqHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}
func (h *reqHeap) Push(x any) {
	r := x.(*Request)
	r.heapIndex = len(*h)
	*h = append(*h, r)
}
func (h *reqHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.heapIndex = -1
	return r
}

func (p *priorityQueue) Len() int             { return len(p.h) }
func (p *priorityQueue) Peek() *Request       { return p.h[0] }
func (p *priorityQueue) Pop() *Request        { return heap.Pop(&p.h).(*Request) }
func (p *priorityQueue) Push(r *Request)      { heap.Push(&p.h, r) }
func (p *priorityQueue) PushFront(r *Request) { heap.Push(&p.h, r) }

func (p *priorityQueue) Remove(r *Request) bool {
	i := r.heapIndex
	if i < 0 || i >= len(p.h) || p.h[i] != r {
		return false
	}
	heap.Remove(&p.h, i)
	return true
}

func (p *priorityQueue) Each(fn func(*Request)) {
	for _, r := range p.h {
		fn(r)
	}
}
