package webui

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		path, wantType, wantBody string
		status                   int
	}{
		{"/", "text/html; charset=utf-8", `<script src="/ui/app.js"`, 200},
		{"/ui/app.js", "text/javascript; charset=utf-8", "const App", 200},
		{"/ui/prom.js", "text/javascript; charset=utf-8", "histogramQuantile", 200},
		{"/ui/style.css", "text/css; charset=utf-8", ":root", 200},
		{"/ui/", "", "", 404},           // no directory listing
		{"/ui/nope.js", "", "", 404},    // unknown file
		{"/index.html", "", "", 404},    // only / and /ui/ are the page's
		{"/ui/index.html", "", "", 301}, // the file server's canonical redirect to /ui/, itself a 404
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("GET %s: status %d, want %d", tc.path, rec.Code, tc.status)
			continue
		}
		if got := rec.Header().Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, got)
		}
		if tc.status != 200 {
			continue
		}
		if got := rec.Header().Get("Content-Type"); got != tc.wantType {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.wantType)
		}
		if !strings.Contains(rec.Body.String(), tc.wantBody) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.wantBody)
		}
	}
}

// runProm runs testdata/run.js (static/prom.js under node) on req.
func runProm(t *testing.T, req any) map[string]json.RawMessage {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIPPING the JavaScript tests: node is not installed")
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "testdata/run.js")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

type bucket struct {
	Le    string  `json:"le"`
	Count float64 `json:"count"`
}

type quantileCase struct {
	Name    string   `json:"-"`
	Q       float64  `json:"q"`
	Buckets []bucket `json:"buckets"`
	Want    float64  `json:"-"`
}

// a is the histogram 0.1:2, 0.5:6, 1:8, +Inf:10 (cumulative counts).
var a = []bucket{{"0.1", 2}, {"0.5", 6}, {"1", 8}, {"+Inf", 10}}

// The expected values follow Prometheus's documented histogram_quantile
// (promql/quantile.go, the functions documentation): rank = q·count, the
// first bucket whose count reaches the rank, linear interpolation between
// its lower and upper bound (the lowest bucket starts at 0), the upper
// bound of the second-highest bucket when the rank falls in +Inf.
var quantileCases = []quantileCase{
	{"median interpolates in (0.1, 0.5]", 0.5, a, 0.1 + 0.4*(5.0-2)/(6-2)}, // 0.4
	{"low rank, lowest bucket starts at 0", 0.1, a, 0.1 * 1 / 2},           // 0.05
	{"rank on a bucket boundary", 0.8, a, 1},                               // 0.5 + 0.5·(8−6)/(8−6)
	{"rank in +Inf answers the bucket below", 0.9, a, 1},
	{"q below 0", -0.1, a, math.Inf(-1)},
	{"q above 1", 1.5, a, math.Inf(1)},
	{"no +Inf bucket", 0.5, a[:3], math.NaN()},
	{"only the +Inf bucket", 0.5, a[3:], math.NaN()},
	{"no observations", 0.5, []bucket{{"1", 0}, {"+Inf", 0}}, math.NaN()},
	{"unsorted, equal bounds summed", 0.5, []bucket{{"1", 8}, {"+Inf", 10}, {"0.1", 1}, {"0.1", 1}, {"0.5", 6}}, 0.4},
	{"non-monotonic counts raised", 0.5, []bucket{{"0.1", 3}, {"0.5", 2}, {"+Inf", 4}}, 0.1 * 2 / 3},
	{"lowest bound ≤ 0 is returned as is", 0.25, []bucket{{"-1", 2}, {"1", 4}, {"+Inf", 4}}, -1},
}

func TestHistogramQuantile(t *testing.T) {
	res := runProm(t, map[string]any{"quantiles": quantileCases})
	var got []string
	if err := json.Unmarshal(res["quantiles"], &got); err != nil || len(got) != len(quantileCases) {
		t.Fatalf("quantiles %s: %v", res["quantiles"], err)
	}
	for i, tc := range quantileCases {
		checkFloat(t, tc.Name, got[i], tc.Want)
	}
}

func checkFloat(t *testing.T, what, got string, want float64) {
	t.Helper()
	g, err := strconv.ParseFloat(got, 64)
	if err != nil {
		t.Errorf("%s: %q: %v", what, got, err)
		return
	}
	same := g == want || (math.IsNaN(g) && math.IsNaN(want)) || math.Abs(g-want) < 1e-12
	if !same {
		t.Errorf("%s: got %v, want %v", what, g, want)
	}
}

// exposition is the Prometheus text format with its corner cases: HELP
// and TYPE lines, escaped label values, +Inf, exponents and a timestamp.
const exposition = `# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="abort",model_name="m"} 1
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 3
vllm:request_success_total{engine="1",finished_reason="stop",model_name="m"} 2
escaped{l="q\"x\\y\nz"} +Inf 1700000000000
plain 2.5e-3
`

func TestParse(t *testing.T) {
	res := runProm(t, map[string]any{
		"text":  exposition,
		"sumBy": map[string]string{"name": "vllm:request_success_total", "label": "finished_reason"},
	})
	type sample struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
		Value  string            `json:"value"`
	}
	var samples []sample
	var by map[string]float64
	if err := json.Unmarshal(res["samples"], &samples); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res["sumBy"], &by); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 5 {
		t.Fatalf("%d samples, want 5: %+v", len(samples), samples)
	}
	if s := samples[0]; s.Name != "vllm:request_success_total" || s.Labels["finished_reason"] != "abort" || s.Labels["engine"] != "0" || s.Value != "1" {
		t.Errorf("sample 0 = %+v", s)
	}
	if s := samples[3]; s.Name != "escaped" || s.Labels["l"] != "q\"x\\y\nz" || s.Value != "Infinity" {
		t.Errorf("escaped sample = %+v", s)
	}
	if s := samples[4]; s.Name != "plain" || len(s.Labels) != 0 || s.Value != "0.0025" {
		t.Errorf("plain sample = %+v", s)
	}
	if by["abort"] != 1 || by["stop"] != 5 || len(by) != 2 {
		t.Errorf("sum by (finished_reason) = %v, want abort 1, stop 5", by)
	}
}

// TestRateQuantile is histogram_quantile(0.5, sum by (le) (rate(h_bucket)))
// over two scrapes 2 s apart, and rate() of a counter that reset.
func TestRateQuantile(t *testing.T) {
	old := "h_bucket{le=\"0.1\",x=\"a\"} 1\nh_bucket{le=\"0.1\",x=\"b\"} 0\nh_bucket{le=\"1\",x=\"a\"} 2\nh_bucket{le=\"+Inf\",x=\"a\"} 2\n"
	cur := "h_bucket{le=\"0.1\",x=\"a\"} 1\nh_bucket{le=\"0.1\",x=\"b\"} 2\nh_bucket{le=\"1\",x=\"a\"} 6\nh_bucket{le=\"+Inf\",x=\"a\"} 10\n"
	// Summed by le, the increases are 0.1: 2, 1: 4, +Inf: 8, per second
	// 1, 2, 4: rank 0.5·4 = 2 falls in (0.1, 1]: 0.1 + 0.9·(2−1)/(2−1) = 1.
	// p25: rank 1 falls in the first bucket: 0.1·1/1.
	for _, tc := range []struct {
		q    float64
		want float64
	}{{0.5, 1}, {0.25, 0.1}, {0.2, 0.1 * 0.8}} {
		res := runProm(t, map[string]any{"rate": map[string]any{
			"old": old, "cur": cur, "name": "h", "seconds": 2, "q": tc.q, "counter": []float64{10, 4},
		}})
		var q, r string
		json.Unmarshal(res["rateQuantile"], &q)
		json.Unmarshal(res["counterRate"], &r)
		checkFloat(t, "rate quantile "+strconv.FormatFloat(tc.q, 'g', -1, 64), q, tc.want)
		checkFloat(t, "rate after a reset (10 → 4 in 2 s counts 4)", r, 2)
	}
}
