package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// balancer is the test's load balancer in front of govllm replicas, doing
// what deploy/nginx/govllm.conf does: it routes round-robin over the
// replicas whose GET /health answered 200 at the last check, streams
// responses through unbuffered, and retries a request that got 503 before
// any byte was sent to the client on another replica (a draining replica
// refuses new requests that way), marking the refusing replica down.
type balancer struct {
	backends []*backend
	next     atomic.Uint64
	retried  atomic.Int64 // 503s retried on another replica
	hc       *http.Client
	stop     chan struct{}
	checked  sync.WaitGroup
}

// backend is one replica and what the balancer saw of it.
type backend struct {
	url       string
	healthy   atomic.Bool
	inflight  atomic.Int64
	completed atomic.Int64 // 200 responses that ended with data: [DONE]
}

// pinHeader sends a request to one replica first (by index): a test hook
// to reach a draining replica before the health check has noticed.
const pinHeader = "X-Test-Backend"

func newBalancer(urls []string, interval time.Duration) *balancer {
	b := &balancer{hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, stop: make(chan struct{})}
	for _, u := range urls {
		be := &backend{url: u}
		be.healthy.Store(true)
		b.backends = append(b.backends, be)
	}
	b.checked.Add(1)
	go b.checkHealth(interval)
	return b
}

// checkHealth probes every backend's /health each interval.
func (b *balancer) checkHealth(interval time.Duration) {
	defer b.checked.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, be := range b.backends {
			resp, err := b.hc.Get(be.url + "/health")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			be.healthy.Store(err == nil && resp.StatusCode == http.StatusOK)
		}
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
	}
}

// close stops the health checks and closes idle connections.
func (b *balancer) close() {
	close(b.stop)
	b.checked.Wait()
	b.hc.CloseIdleConnections()
}

// pick returns the order in which to try the backends for one request:
// the pinned one first, then the healthy ones round-robin.
func (b *balancer) pick(r *http.Request) []*backend {
	var order []*backend
	if pin := r.Header.Get(pinHeader); pin != "" {
		order = append(order, b.backends[int(pin[0]-'0')])
	}
	start := b.next.Add(1)
	for i := range b.backends {
		be := b.backends[(int(start)+i)%len(b.backends)]
		if be.healthy.Load() && (len(order) == 0 || be != order[0]) {
			order = append(order, be)
		}
	}
	return order
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, be := range b.pick(r) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, be.url+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		be.inflight.Add(1)
		resp, err := b.hc.Do(req)
		if err != nil || resp.StatusCode == http.StatusServiceUnavailable {
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				b.retried.Add(1)
			}
			be.healthy.Store(false)
			be.inflight.Add(-1)
			continue
		}
		b.relay(w, resp, be)
		be.inflight.Add(-1)
		return
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "no replica available", http.StatusServiceUnavailable)
}

// relay streams resp to w, flushing every read, and counts a completed
// stream for be.
func (b *balancer) relay(w http.ResponseWriter, resp *http.Response, be *backend) {
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	var tail []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			tail = append(tail, buf[:n]...)
			if len(tail) > 64 {
				tail = tail[len(tail)-64:]
			}
		}
		if err != nil {
			break
		}
	}
	if resp.StatusCode == http.StatusOK && strings.HasSuffix(string(tail), "data: [DONE]\n\n") {
		be.completed.Add(1)
	}
}
