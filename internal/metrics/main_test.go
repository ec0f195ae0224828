package metrics

import (
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"govllm/internal/stats"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// scrape serves g through Handler, as GET /metrics does, and parses the
// classic text exposition.
func scrape(t testing.TB, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(g).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: Content-Type %q, want the classic text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// flatten turns families into "series → value" (see seriesKey), checking
// that every vllm:* and govllm:* series (except cache_config_info) carries
// model_name="m" and engine="0".
func flatten(t testing.TB, mfs map[string]*dto.MetricFamily) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if (strings.HasPrefix(name, "vllm:") || strings.HasPrefix(name, "govllm:")) && name != "vllm:cache_config_info" {
				if labels["model_name"] != "m" || labels["engine"] != "0" {
					t.Errorf("%s: labels %v, want model_name=m engine=0", name, labels)
				}
				delete(labels, "model_name")
				delete(labels, "engine")
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[seriesKey(name, labels)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[seriesKey(name, labels)] = m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				out[seriesKey(name, labels)] = m.GetUntyped().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[seriesKey(name+"_count", labels)] = float64(h.GetSampleCount())
				out[seriesKey(name+"_sum", labels)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					bl := maps.Clone(labels)
					bl["le"] = formatLE(b.GetUpperBound())
					out[seriesKey(name+"_bucket", bl)] = float64(b.GetCumulativeCount())
				}
			default:
				t.Fatalf("%s: unexpected type %v", name, mf.GetType())
			}
		}
	}
	return out
}

// seriesKey renders name{k="v",…} with sorted labels, or name alone.
func seriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func formatLE(v float64) string {
	if math.IsInf(v, +1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Both stat loggers satisfy the front end's StatLogger interface (declared
// here again: this package must not import internal/llm).
var (
	_ interface {
		Record(*stats.SchedulerStats, *stats.IterationStats)
	} = (*Prometheus)(nil)
	_ interface {
		Record(*stats.SchedulerStats, *stats.IterationStats)
	} = (*Logging)(nil)
)
