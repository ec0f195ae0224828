package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nginxConfig is deploy/nginx/govllm.conf with its upstream servers, its
// port and its files moved to the test's.
func nginxConfig(t *testing.T, replicas []string, port int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "nginx", "govllm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	conf := regexp.MustCompile(`(?m)^(\s*server\s+)\S+:\d+`).ReplaceAllStringFunc(string(b), func(s string) string {
		host := strings.TrimPrefix(replicas[i%len(replicas)], "http://")
		i++
		return regexp.MustCompile(`\S+:\d+$`).ReplaceAllString(s, host)
	})
	dir := t.TempDir()
	conf = strings.ReplaceAll(conf, "listen 8000;", fmt.Sprintf("listen 127.0.0.1:%d;", port))
	conf = strings.ReplaceAll(conf, "/tmp/govllm-nginx", filepath.Join(dir, "nginx"))
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// completions5xx is a replica's count of 5xx answers on /v1/completions.
func completions5xx(t *testing.T, url string) string {
	t.Helper()
	r := do(t, mustRequest(t, "GET", url+"/metrics"))
	m := regexp.MustCompile(`(?m)^http_requests_total\{handler="/v1/completions",method="POST",status="5xx"\} (\S+)$`).FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("no 5xx series of /v1/completions at %s", url)
	}
	return m[1]
}

// TestNginxRetriesADrainingReplica runs deploy/nginx/govllm.conf (where
// nginx is installed) in front of three `govllm serve` processes and
// drains one with SIGTERM while a stream keeps it draining: requests sent
// through nginx all complete, though the draining replica answered (at
// least) one of them 503 (its own http_requests_total says so), which
// nginx retried on another replica; the drained replica then exits 0.
func TestNginxRetriesADrainingReplica(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (TestThreeReplicasBehindABalancer covers the same with a Go balancer)")
	}
	reps := []*replica{startReplica(t), startReplica(t), startReplica(t)}
	urls := make([]string, len(reps))
	for i, r := range reps {
		waitHealthy(t, r.url)
		urls[i] = r.url
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ngx := exec.Command(bin, "-e", "stderr", "-c", nginxConfig(t, urls, port), "-g", "daemon off;")
	if err := ngx.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ngx.Process.Signal(syscall.SIGQUIT); ngx.Wait(); http.DefaultClient.CloseIdleConnections() })
	front := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for r, err := http.Get(front + "/nginx-health"); err != nil || r.StatusCode != 200; r, err = http.Get(front + "/nginx-health") {
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not start: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", reps[0].url+"/v1/completions",
		strings.NewReader(`{"prompt":"hold","max_tokens":1900,"ignore_eos":true,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the long stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	reps[0].cmd.Process.Signal(syscall.SIGTERM)
	checkDraining(t, reps[0].url)
	before := completions5xx(t, reps[0].url)
	for i := range 9 {
		if e := streamOnce(context.Background(), http.DefaultClient, front, 8); e != streamCompleted {
			t.Errorf("request %d through nginx ended %v", i, e)
		}
	}
	if after := completions5xx(t, reps[0].url); after == before {
		t.Errorf("the draining replica answered no 503 (5xx count %s): nginx never tried it", after)
	}
	cancel()
	checkReplicaExit(t, reps[0])
}
