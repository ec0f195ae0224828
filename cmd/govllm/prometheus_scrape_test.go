package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// prometheusBinary finds a Prometheus 3 server: $PROMETHEUS, else
// prometheus on PATH. It skips the test, loudly, when there is none.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			t.Skip("SKIPPED: no Prometheus 3 (set PROMETHEUS or put prometheus on PATH; " +
				"go install github.com/prometheus/prometheus/cmd/prometheus@v0.316.0)")
		}
	}
	if v := prometheusMajor(bin); v != 3 {
		t.Skipf("SKIPPED: %s is not Prometheus 3 (major version %d)", bin, v)
	}
	return bin
}

// prometheusMajor is the major version of a Prometheus binary: the one its
// --version prints in a release build, else (a go install build prints an
// empty version) the one its Go module version encodes: Prometheus 3.y.z is
// module github.com/prometheus/prometheus v0.3yy.z. 0 when unknown.
func prometheusMajor(bin string) int {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return 0
	}
	if m := regexp.MustCompile(`prometheus, version (\d+)\.`).FindSubmatch(out); m != nil {
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil || info.Main.Path != "github.com/prometheus/prometheus" {
		return 0
	}
	if m := regexp.MustCompile(`^v0\.(\d)\d\d\.`).FindStringSubmatch(info.Main.Version); m != nil {
		v, _ := strconv.Atoi(m[1])
		return v
	}
	return 0
}

// freeAddr returns a loopback address no one listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Prometheus with exemplar storage, scraping target
// every second over OpenMetrics, and returns its base URL once it is ready.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: govllm
    scrape_protocols: [OpenMetricsText1.0.0, PrometheusText0.0.4]
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--enable-feature=exemplar-storage")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", log.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("prometheus not ready after 60 s")
	return ""
}

// storedExemplarIDs asks Prometheus for the exemplars of query over the
// last minute and returns their request ids.
func storedExemplarIDs(t *testing.T, prom, query string) map[string]bool {
	t.Helper()
	now := time.Now()
	q := url.Values{"query": {query},
		"start": {strconv.FormatInt(now.Add(-time.Minute).Unix(), 10)},
		"end":   {strconv.FormatInt(now.Add(time.Minute).Unix(), 10)}}
	resp, err := http.Get(prom + "/api/v1/query_exemplars?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   []struct {
			Exemplars []struct {
				Labels map[string]string `json:"labels"`
			} `json:"exemplars"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query_exemplars %s: %v %s %s", query, err, r.Status, r.Error)
	}
	ids := map[string]bool{}
	for _, s := range r.Data {
		for _, e := range s.Exemplars {
			ids[e.Labels["request_id"]] = true
		}
	}
	return ids
}

// TestPrometheusStoresExemplars: a real Prometheus 3 scraping a real
// server over OpenMetrics stores the request ids of the requests it served
// as exemplars of the TTFT, inter-token and e2e histograms, queryable with
// /api/v1/query_exemplars. Requests go one at a time, each waiting until
// Prometheus has its id (a bucket keeps only its latest exemplar).
func TestPrometheusStoresExemplars(t *testing.T) {
	bin := prometheusBinary(t)
	noLeaks(t)
	base, _ := startServe(t, testServeConfig())
	prom := startPrometheus(t, bin, strings.TrimPrefix(base, "http://"))
	for _, id := range []string{"prom-exemplar-a", "prom-exemplar-b"} {
		postWithID(t, base+"/v1/completions", id, `{"prompt":"once upon a time","max_tokens":4,"ignore_eos":true}`)
		want := "cmpl-" + id
		deadline := time.Now().Add(30 * time.Second)
		for _, fam := range exemplarFamilies {
			for !storedExemplarIDs(t, prom, fam+"_bucket")[want] {
				if time.Now().After(deadline) {
					t.Fatalf("%s: Prometheus stored no exemplar request_id=%q in 30 s; it has %v",
						fam, want, storedExemplarIDs(t, prom, fam+"_bucket"))
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
	}
	// Both requests stay stored, each with its own id.
	got := storedExemplarIDs(t, prom, "vllm:e2e_request_latency_seconds_bucket")
	if !got["cmpl-prom-exemplar-a"] || !got["cmpl-prom-exemplar-b"] {
		t.Errorf("e2e exemplars %v, want both requests", got)
	}
}
