package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"govllm/internal/stats"
)

func TestExemplarID(t *testing.T) {
	// OpenMetrics: an exemplar's label names and values hold at most 128
	// runes in total; "request_id" takes 10, so an id keeps 118.
	const limit = 128 - len("request_id")
	cases := []struct {
		name, id, want string
	}{
		{"short", "chatcmpl-abc", "chatcmpl-abc"},
		{"at the limit", strings.Repeat("x", limit), strings.Repeat("x", limit)},
		{"one over", strings.Repeat("x", limit) + "y", strings.Repeat("x", limit)},
		{"256 ASCII (the longest client id) behind a prefix", "cmpl-" + strings.Repeat("z", 256), "cmpl-" + strings.Repeat("z", limit-5)},
		{"multi-byte runes cut at a rune boundary", strings.Repeat("é", 200), strings.Repeat("é", limit)},
		{"invalid UTF-8 replaced", "a\xffb", "a\uFFFDb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := exemplarID(c.id)
			if got != c.want {
				t.Fatalf("exemplarID = %q (%d runes), want %q", got, utf8.RuneCountInString(got), c.want)
			}
			// client_golang accepts it (it panics on an invalid exemplar).
			h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h", Buckets: []float64{1}})
			observeWithID(h.(exemplarObserver), 0.5, c.id)
			m := &dto.Metric{}
			if err := h.Write(m); err != nil {
				t.Fatal(err)
			}
			if e := m.GetHistogram().GetBucket()[0].GetExemplar(); e.GetLabel()[0].GetValue() != c.want {
				t.Errorf("stored exemplar %v", e)
			}
		})
	}
}

// exemplarStep is one step of two requests: "req-a" gets its first token
// after 0.3 s and one more after 20 ms; "req-b" one token after 0.6 s and
// finishes with an e2e latency of 4 s; "req-c", cancelled by its client,
// finishes too (no e2e observation, decision 6). With ids false the same
// samples carry no request ids.
func exemplarStep(ids bool) *stats.IterationStats {
	it := &stats.IterationStats{
		NumGenerationTokens:     3,
		TimeToFirstTokensIter:   []time.Duration{300 * ms},
		InterTokenLatenciesIter: []time.Duration{20 * ms, 600 * ms},
		FinishedRequests: []stats.FinishedRequestStats{
			{FinishReason: stats.FinishStop, E2ELatency: 4 * time.Second, NumGenerationTokens: 2},
			{FinishReason: stats.FinishAbort, E2ELatency: 9 * time.Second, ClientAbort: true},
		},
	}
	if ids {
		it.TimeToFirstTokenRequestIDs = []string{"req-a"}
		it.InterTokenLatencyRequestIDs = []string{"req-a", "req-b"}
		it.FinishedRequests[0].RequestID = "req-b"
		it.FinishedRequests[1].RequestID = "req-c"
	}
	return it
}

func TestRecordExemplars(t *testing.T) {
	reg := prometheus.NewRegistry()
	newTestPrometheus(t, reg).Record(&stats.SchedulerStats{}, exemplarStep(true))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// The bucket of each sample (vLLM's bounds): TTFT 0.3 in le=0.5;
	// ITL 0.02 in le=0.025 and 0.6 in le=0.75; e2e 4 in le=5.
	want := map[string]map[float64][2]any{
		"vllm:time_to_first_token_seconds": {0.5: {"req-a", 0.3}},
		"vllm:inter_token_latency_seconds": {0.025: {"req-a", 0.02}, 0.75: {"req-b", 0.6}},
		"vllm:e2e_request_latency_seconds": {5: {"req-b", 4.0}},
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, b := range m.GetHistogram().GetBucket() {
				e := b.GetExemplar()
				w, ok := want[mf.GetName()][b.GetUpperBound()]
				if !ok {
					if e != nil {
						t.Errorf("%s le=%g: unexpected exemplar %v", mf.GetName(), b.GetUpperBound(), e)
					}
					continue
				}
				delete(want[mf.GetName()], b.GetUpperBound())
				if len(e.GetLabel()) != 1 || e.GetLabel()[0].GetName() != "request_id" || e.GetLabel()[0].GetValue() != w[0] ||
					e.GetValue() != w[1] || e.GetTimestamp() == nil {
					t.Errorf("%s le=%g: exemplar %v, want request_id=%q value %v with a timestamp", mf.GetName(), b.GetUpperBound(), e, w[0], w[1])
				}
			}
		}
	}
	for name, left := range want {
		if len(left) > 0 {
			t.Errorf("%s: no bucket %v", name, left)
		}
	}
}

// get serves GET /metrics through Handler with the given Accept header.
func get(t *testing.T, g prometheus.Gatherer, accept string) (contentType, body string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	Handler(g).ServeHTTP(rec, req)
	b, err := io.ReadAll(rec.Body)
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", rec.Code, err)
	}
	return rec.Header().Get("Content-Type"), string(b)
}

// openMetricsAccept is what a scraper sends to negotiate OpenMetrics.
const openMetricsAccept = "application/openmetrics-text; version=1.0.0"

// exemplarLine matches an OpenMetrics bucket line with an exemplar:
// name_bucket{…le="…"} count # {request_id="…"} value timestamp.
var exemplarLine = regexp.MustCompile(`(?m)^(\S+)_bucket\{[^}]*le="([^"]+)"\} \d+ # \{request_id="([^"]*)"\} (\S+) \S+$`)

func TestExemplarsOnlyInOpenMetrics(t *testing.T) {
	with, without := prometheus.NewRegistry(), prometheus.NewRegistry()
	newTestPrometheus(t, with).Record(&stats.SchedulerStats{}, exemplarStep(true))
	newTestPrometheus(t, without).Record(&stats.SchedulerStats{}, exemplarStep(false))

	// The classic text format: byte for byte what it is without ids.
	for _, accept := range []string{"", "text/plain; version=0.0.4", "*/*"} {
		ctA, a := get(t, with, accept)
		ctB, b := get(t, without, accept)
		if !strings.HasPrefix(ctA, "text/plain") || ctA != ctB {
			t.Errorf("Accept %q: Content-Type %q / %q, want the classic text format", accept, ctA, ctB)
		}
		if a != b {
			t.Errorf("Accept %q: the classic exposition changed with exemplars:\n%s\n---\n%s", accept, a, b)
		}
		if strings.Contains(a, "request_id") {
			t.Errorf("Accept %q: the classic exposition carries exemplars", accept)
		}
	}

	ct, om := get(t, with, openMetricsAccept)
	if !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q, want OpenMetrics", ct)
	}
	var got []string
	for _, m := range exemplarLine.FindAllStringSubmatch(om, -1) {
		got = append(got, strings.Join(m[1:], " "))
	}
	want := []string{
		"vllm:e2e_request_latency_seconds 5.0 req-b 4.0",
		"vllm:inter_token_latency_seconds 0.025 req-a 0.02",
		"vllm:inter_token_latency_seconds 0.75 req-b 0.6",
		"vllm:time_to_first_token_seconds 0.5 req-a 0.3",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("exemplar lines (family le id value):\n got %q\nwant %q", got, want)
	}
	if strings.Count(om, "# {") != len(want) {
		t.Errorf("%d exemplars in the exposition, want %d", strings.Count(om, "# {"), len(want))
	}
	if _, plain := get(t, without, openMetricsAccept); strings.Contains(plain, "# {") {
		t.Error("samples without ids produced exemplars")
	}
}
