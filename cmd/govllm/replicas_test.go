package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// asMainEnv makes the test binary run as govllm itself (main), so that the
// replica test starts real `govllm serve` processes without a build.
const asMainEnv = "GOVLLM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// replica is one `govllm serve` process.
type replica struct {
	cmd    *exec.Cmd
	url    string
	exited chan error
	log    *strings.Builder
}

// startReplica runs `govllm serve` (the built-in model, tiny) on a free
// loopback port.
func startReplica(t *testing.T) *replica {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &replica{url: fmt.Sprintf("http://127.0.0.1:%d", port), exited: make(chan error, 1), log: &strings.Builder{}}
	r.cmd = exec.Command(os.Args[0], "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--max-model-len", "2048", "--max-num-seqs", "8", "--kv-cache-memory", "64MiB", "--threads", "1",
		"--shutdown-timeout", "15", "--disable-log-requests", "--uvicorn-log-level", "warning")
	r.cmd.Env = append(os.Environ(), asMainEnv+"=1")
	r.cmd.Stderr = &syncWriter{w: r.log}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.exited
	})
	return r
}

// syncWriter serializes writes (exec copies stderr from a goroutine).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// successes sums vllm:request_success_total over its series at url.
func successes(t *testing.T, url string) int {
	t.Helper()
	r := do(t, mustRequest(t, "GET", url+"/metrics"))
	total := 0.0
	for _, line := range strings.Split(r.body, "\n") {
		if strings.HasPrefix(line, "vllm:request_success_total{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			total += v
		}
	}
	return int(total)
}

// streamOnce sends one streamed completion through url and classifies how
// it ended.
func streamOnce(ctx context.Context, hc *http.Client, url string, maxTokens int, hdr ...string) streamEnd {
	body := fmt.Sprintf(`{"prompt":"hello replicas","max_tokens":%d,"ignore_eos":true,"stream":true}`, maxTokens)
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return streamBroken
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return classifyReply(true, resp.StatusCode, string(b), err)
}

// TestThreeReplicasBehindABalancer: three `govllm serve` processes behind
// the test's balancer (health checks on /health, retry of a 503 sent
// before the stream starts); clients stream through it while one replica
// gets SIGTERM. No client sees a cut stream or an error: every one ends
// with [DONE]. A request that reaches the draining replica gets 503 and
// the balancer serves it from another. The drained replica exits 0; the
// others keep serving; each replica's vllm:request_success_total is
// exactly the requests the balancer completed on it, and their sum the
// requests the clients completed.
func TestThreeReplicasBehindABalancer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	reps := []*replica{startReplica(t), startReplica(t), startReplica(t)}
	urls := make([]string, len(reps))
	for i, r := range reps {
		waitHealthy(t, r.url)
		urls[i] = r.url
	}
	bal := newBalancer(urls, 200*time.Millisecond)
	front := httptest.NewServer(bal)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(func() { front.Close(); bal.close(); hc.CloseIdleConnections() })

	var mu sync.Mutex
	ends := map[streamEnd]int{}
	load, stopLoad := context.WithCancel(context.Background())
	var clients sync.WaitGroup
	for range 6 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for load.Err() == nil {
				e := streamOnce(context.Background(), hc, front.URL, 48)
				mu.Lock()
				ends[e]++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	drained := drainUnderLoad(t, reps[0], bal, hc, front.URL)
	time.Sleep(500 * time.Millisecond)
	stopLoad()
	clients.Wait()
	checkReplicaExit(t, reps[0])
	for range 6 { // the survivors serve on
		if e := streamOnce(context.Background(), hc, front.URL, 8); e != streamCompleted {
			t.Errorf("after the drain, a request through the balancer ended %v", e)
		}
	}
	checkAccounting(t, bal, drained, urls[1:], ends[streamCompleted]+1+6)
	if ends[streamErrored]+ends[streamBroken] > 0 || ends[streamCompleted] == 0 {
		t.Errorf("clients saw %d completed, %d errored, %d cut streams; want every stream completed", ends[streamCompleted], ends[streamErrored], ends[streamBroken])
	}
	t.Logf("%d client streams completed; %d 503s retried on another replica", ends[streamCompleted], bal.retried.Load())
}

// drainUnderLoad SIGTERMs r while a long stream of the test's own runs on
// it, checks a request pinned to r is retried elsewhere after r's /health
// turned 503, waits until the balancer has nothing in flight on r, and
// returns r's vllm:request_success_total then (its listener is still open:
// the long stream keeps the drain going), then ends the long stream.
func drainUnderLoad(t *testing.T, r *replica, bal *balancer, hc *http.Client, front string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/v1/completions",
		strings.NewReader(`{"prompt":"hold","max_tokens":1900,"ignore_eos":true,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the long stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	held := bufio.NewReader(resp.Body)
	if _, err := held.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	checkDraining(t, r.url)
	before := bal.retried.Load()
	if e := streamOnce(context.Background(), hc, front, 8, pinHeader, "0"); e != streamCompleted || bal.retried.Load() == before {
		t.Errorf("a request pinned to the draining replica ended %v after %d retries, want completed after one", e, bal.retried.Load()-before)
	}
	deadline := time.Now().Add(10 * time.Second)
	for bal.backends[0].inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	n := successes(t, r.url)
	if _, err := held.Peek(1); err != nil {
		t.Fatalf("the long stream ended before the drained replica's last scrape: %v", err)
	}
	return n
}

// checkReplicaExit waits for r to exit after its drain: status 0.
func checkReplicaExit(t *testing.T, r *replica) {
	t.Helper()
	select {
	case err := <-r.exited:
		r.exited <- err // for the cleanup
		if err != nil {
			t.Errorf("the drained replica exited with %v\n%s", err, r.log)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the drained replica did not exit\n%s", r.log)
	}
}

// checkAccounting compares each replica's vllm:request_success_total (the
// drained one's as scraped during its drain) with the requests the
// balancer completed on it, and their sum with the clients' count.
func checkAccounting(t *testing.T, bal *balancer, drained int, survivors []string, clientCompleted int) {
	t.Helper()
	sum := drained
	if want := int(bal.backends[0].completed.Load()); drained != want {
		t.Errorf("drained replica: vllm:request_success_total %d, the balancer completed %d there", drained, want)
	}
	for i, u := range survivors {
		got, want := successes(t, u), int(bal.backends[i+1].completed.Load())
		if got != want {
			t.Errorf("replica %d: vllm:request_success_total %d, the balancer completed %d there", i+1, got, want)
		}
		sum += got
	}
	if sum != clientCompleted {
		t.Errorf("Σ vllm:request_success_total over the replicas = %d, the clients completed %d", sum, clientCompleted)
	}
}

// TestBenchServeBehindABalancer: `govllm bench serve` through the
// balancer cross-checks its counts against the sum of the replicas'
// /metrics given with --metrics-url (and exits non-zero with
// --verify-metrics when a replica is left out, which undercounts).
func TestBenchServeBehindABalancer(t *testing.T) {
	noLeaks(t)
	var urls, metrics []string
	for range 3 {
		u, _ := startServe(t, testServeConfig())
		urls, metrics = append(urls, u), append(metrics, u+"/metrics")
	}
	bal := newBalancer(urls, time.Hour)
	front := httptest.NewServer(bal)
	t.Cleanup(func() { front.Close(); bal.close() })
	for _, tc := range []struct {
		metrics []string
		ok      bool
	}{{metrics, true}, {metrics[:2], false}} {
		args := append([]string{"bench", "serve", "--base-url", front.URL, "--num-prompts", "6", "--random-input-len", "8",
			"--random-output-len", "2", "--max-concurrency", "3", "--disable-tqdm", "--verify-metrics", "--metrics-url"}, tc.metrics...)
		var stdout, stderr strings.Builder
		code := run(context.Background(), args, &stdout, &stderr)
		if ok := code == 0; ok != tc.ok || tc.ok == strings.Contains(stdout.String(), "MISMATCH") {
			t.Errorf("with %d of 3 replicas' /metrics: exit %d\n%s\n%s", len(tc.metrics), code, &stdout, &stderr)
		}
	}
}
