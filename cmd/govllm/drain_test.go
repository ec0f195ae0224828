package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamEnd classifies how one SSE stream ended.
type streamEnd int

const (
	streamCompleted streamEnd = iota // every chunk, a finish_reason, [DONE]
	streamErrored                    // an error event, then [DONE]
	streamBroken                     // anything else: cut, or no [DONE]
)

// classifyReply classifies one response read to its end: a stream, or a
// non-streamed reply (completed: 200 with a finish_reason; ended: 503
// saying the server is shutting down).
func classifyReply(stream bool, status int, body string, readErr error) streamEnd {
	switch {
	case !stream && status == http.StatusServiceUnavailable && strings.Contains(body, "the server is shutting down"):
		return streamErrored
	case !stream && status == http.StatusOK && strings.Contains(body, `"finish_reason":"length"`):
		return streamCompleted
	case !stream:
		return streamBroken
	case status != http.StatusOK || readErr != nil || !strings.HasSuffix(body, "data: [DONE]\n\n"):
		return streamBroken
	case strings.Contains(body, `"error":`) && strings.Contains(body, "the server is shutting down"):
		return streamErrored
	case strings.Contains(body, `"finish_reason":"length"`):
		return streamCompleted
	}
	return streamBroken
}

// TestDrainOnShutdown: the shutdown signal (serve's context cancelled)
// during 50 long streams and 4 long non-streamed requests. While the
// drain lasts, /health is 503, /ping 200 and a new generation request 503
// with Retry-After; every stream either
// completes or ends with an error event and [DONE] (none is cut), every
// non-streamed one completes or gets 503; serve
// returns nil within the shutdown timeout (plus the handlers' finishing time).
func TestDrainOnShutdown(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.ShutdownTimeout = 2 * time.Second
	// 50 × 1000 tokens, 8 at a time: far more than 2 s of work, so some
	// streams are still running when the timeout ends the drain.
	cfg.MaxModelLen = 1024
	url, stop := startServe(t, cfg)
	const streams, n = 50, 54 // and 4 non-streamed requests
	ends := make([]streamEnd, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	sc := &scraper{url: url, hc: http.DefaultClient}
	// The streams first, then (queued behind them, FCFS) the non-streamed
	// requests, which so cannot have started when the drain ends.
	for _, r := range [][2]int{{0, streams}, {streams, n}} {
		for i := r[0]; i < r[1]; i++ {
			wg.Go(func() {
				body := fmt.Sprintf(`{"prompt":"story","max_tokens":1000,"ignore_eos":true,"stream":%v}`, i < streams)
				resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					ends[i], bodies[i] = streamBroken, err.Error()
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				ends[i], bodies[i] = classifyReply(i < streams, resp.StatusCode, string(b), err), string(b)
			})
		}
		sc.await(t, "the requests admitted", 30*time.Second, func(s *scrape) []check {
			return []check{eq("running + waiting", s.sum("vllm:num_requests_running")+s.sum("vllm:num_requests_waiting"), float64(r[1]))}
		})
	}
	stopped := make(chan error, 1)
	start := time.Now()
	go func() { stopped <- stop() }()
	checkDraining(t, url)
	var err error
	select {
	case err = <-stopped:
	case <-time.After(cfg.ShutdownTimeout + finishTimeout + 5*time.Second):
		t.Fatalf("serve did not return within the shutdown timeout")
	}
	if err != nil {
		t.Fatalf("serve returned %v", err)
	}
	took := time.Since(start)
	wg.Wait()
	counts := map[streamEnd]int{}
	for i, e := range ends {
		counts[e]++
		if e == streamBroken {
			t.Errorf("request %d neither completed nor ended with an error (event and [DONE] when streamed): %q", i, bodies[i][max(0, len(bodies[i])-300):])
		}
	}
	for i := streams; i < n; i++ {
		if ends[i] != streamErrored {
			t.Errorf("non-streamed request %d, queued behind 50 streams of 1000 tokens, was not ended by the drain with a 503: %q", i, bodies[i])
		}
	}
	if counts[streamErrored] == 0 {
		t.Errorf("no stream was still running after the shutdown timeout (%d completed): the test does not exercise the error path", counts[streamCompleted])
	}
	t.Logf("%d completed, %d ended with an error event; serve returned after %v", counts[streamCompleted], counts[streamErrored], took)
}

// checkDraining waits for /health to turn 503 "draining", then checks
// that /ping stays 200 and a new generation request gets 503 with
// Retry-After.
func checkDraining(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		r := do(t, mustRequest(t, "GET", url+"/health"))
		if r.status == http.StatusServiceUnavailable && strings.Contains(r.body, "draining") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health = %d %q while draining, want 503 draining", r.status, r.body)
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
	if r := do(t, mustRequest(t, "GET", url+"/ping")); r.status != http.StatusOK {
		t.Errorf("/ping = %d while draining, want 200 (liveness)", r.status)
	}
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		req, _ := http.NewRequestWithContext(context.Background(), "POST", url+path,
			strings.NewReader(`{"prompt":"x","messages":[{"role":"user","content":"x"}],"max_tokens":1}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "shutting down") {
			t.Errorf("%s while draining: %d, Retry-After %q, %s; want 503 with Retry-After", path, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
