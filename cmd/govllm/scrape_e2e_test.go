package main

import (
	"fmt"
	"math"
	"mime"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// This file holds the black-box /metrics helpers of the end-to-end gates: a
// parsed scrape, deltas between two scrapes, expectation checks, and a
// scraper that keeps every scrape it took and checks, on each one, that
// every histogram is self-consistent and that no counter went down since
// the previous scrape.

// scrape is one parsed GET /metrics.
type scrape struct {
	fams map[string]*dto.MetricFamily
	at   time.Time
}

// matches reports whether m carries every label pair of kv.
func matches(m *dto.Metric, kv []string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == kv[i] {
				found = l.GetValue() == kv[i+1]
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// series returns the series of family name whose labels include kv.
func (s *scrape) series(name string, kv ...string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range s.fams[name].GetMetric() {
		if matches(m, kv) {
			out = append(out, m)
		}
	}
	return out
}

// scalar is a counter's, gauge's or untyped sample's value.
func scalar(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// sum adds the values of the matching series (0 when there is none).
func (s *scrape) sum(name string, kv ...string) float64 {
	var v float64
	for _, m := range s.series(name, kv...) {
		v += scalar(m)
	}
	return v
}

// hist sums the matching histogram series' counts and sums.
func (s *scrape) hist(name string, kv ...string) (count, sum float64) {
	for _, m := range s.series(name, kv...) {
		count += float64(m.GetHistogram().GetSampleCount())
		sum += m.GetHistogram().GetSampleSum()
	}
	return count, sum
}

// delta reads the change of counters and histograms between two scrapes
// (gauges are read from the later one).
type delta struct{ a, b *scrape }

func (d delta) c(name string, kv ...string) float64 {
	return d.b.sum(name, kv...) - d.a.sum(name, kv...)
}
func (d delta) n(name string, kv ...string) float64 {
	x, _ := d.a.hist(name, kv...)
	y, _ := d.b.hist(name, kv...)
	return y - x
}
func (d delta) s(name string) float64 {
	_, x := d.a.hist(name)
	_, y := d.b.hist(name)
	return y - x
}

// check is one expectation: got op want.
type check struct {
	what      string
	got, want float64
	op        string // "==", ">", ">=", "<=", "<", "~" (equal up to float error)
}

func eq(what string, got, want float64) check { return check{what, got, want, "=="} }
func gt(what string, got, want float64) check { return check{what, got, want, ">"} }
func ge(what string, got, want float64) check { return check{what, got, want, ">="} }
func le(what string, got, want float64) check { return check{what, got, want, "<="} }
func lt(what string, got, want float64) check { return check{what, got, want, "<"} }
func approx(what string, got, want float64) check {
	return check{what, got, want, "~"}
}

func (c check) ok() bool {
	switch c.op {
	case "==":
		return c.got == c.want
	case ">":
		return c.got > c.want
	case ">=":
		return c.got >= c.want
	case "<=":
		return c.got <= c.want
	case "<":
		return c.got < c.want
	case "~":
		return math.Abs(c.got-c.want) <= 1e-9*math.Max(1, math.Max(math.Abs(c.got), math.Abs(c.want)))
	}
	panic("check: unknown op " + c.op)
}

func (c check) String() string {
	return fmt.Sprintf("%s: got %v, want %s %v", c.what, c.got, c.op, c.want)
}

func failing(cs []check) []string {
	var bad []string
	for _, c := range cs {
		if !c.ok() {
			bad = append(bad, c.String())
		}
	}
	return bad
}

// scraper scrapes one server's /metrics and keeps the history.
type scraper struct {
	url  string
	hc   *http.Client
	all  []*scrape
	last *scrape
}

// scrape takes one scrape, checks the exposition's Content-Type, every
// histogram's self-consistency, and that no counter (and no histogram
// count, bucket or sum) went down since the previous scrape.
func (sc *scraper) scrape(t testing.TB) *scrape {
	t.Helper()
	resp, err := sc.hc.Get(sc.url + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", resp.StatusCode)
	}
	ct := resp.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "text/plain" || params["version"] != "0.0.4" || expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("/metrics Content-Type %q, want the Prometheus text format (text/plain; version=0.0.4)", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	s := &scrape{fams: fams, at: time.Now()}
	for _, msg := range histogramProblems(s) {
		t.Errorf("scrape %d: %s", len(sc.all), msg)
	}
	if sc.last != nil {
		for _, msg := range monotonicProblems(sc.last, s) {
			t.Errorf("scrape %d: %s", len(sc.all), msg)
		}
	}
	sc.all = append(sc.all, s)
	sc.last = s
	return s
}

// await scrapes until every check of want holds, and returns that scrape;
// after the deadline it fails with the checks that still do not hold.
// Statistics are recorded after the client received its final bytes (and
// HTTP metrics when the handler returns), so a scrape right after a
// response may precede them: this polls, it never sleeps and hopes.
func (sc *scraper) await(t testing.TB, what string, timeout time.Duration, want func(s *scrape) []check) *scrape {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := sc.scrape(t)
		bad := failing(want(s))
		if len(bad) == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after %v:\n  %s", what, timeout, strings.Join(bad, "\n  "))
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not synchronisation
	}
}

// seriesKey names a series by its sorted labels.
func seriesKey(m *dto.Metric) string {
	ls := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(ls)
	return "{" + strings.Join(ls, ",") + "}"
}

// histogramProblems checks every histogram series: bucket bounds strictly
// increasing, cumulative counts non-decreasing, the +Inf bucket equal to
// _count, and _sum ≥ 0 (every histogram here observes non-negative values).
func histogramProblems(s *scrape) []string {
	var bad []string
	for name, f := range s.fams {
		if f.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			id := name + seriesKey(m)
			bs := h.GetBucket()
			if len(bs) == 0 {
				bad = append(bad, id+": no buckets")
				continue
			}
			for i := 1; i < len(bs); i++ {
				if bs[i].GetUpperBound() <= bs[i-1].GetUpperBound() {
					bad = append(bad, fmt.Sprintf("%s: bucket bounds not increasing (%v after %v)", id, bs[i].GetUpperBound(), bs[i-1].GetUpperBound()))
				}
				if bs[i].GetCumulativeCount() < bs[i-1].GetCumulativeCount() {
					bad = append(bad, fmt.Sprintf("%s: bucket le=%v count %d < le=%v count %d", id,
						bs[i].GetUpperBound(), bs[i].GetCumulativeCount(), bs[i-1].GetUpperBound(), bs[i-1].GetCumulativeCount()))
				}
			}
			top := bs[len(bs)-1]
			if !math.IsInf(top.GetUpperBound(), 1) {
				bad = append(bad, id+": no le=\"+Inf\" bucket")
			} else if top.GetCumulativeCount() != h.GetSampleCount() {
				bad = append(bad, fmt.Sprintf("%s: +Inf bucket %d != _count %d", id, top.GetCumulativeCount(), h.GetSampleCount()))
			}
			if h.GetSampleSum() < 0 || math.IsNaN(h.GetSampleSum()) {
				bad = append(bad, fmt.Sprintf("%s: _sum %v < 0", id, h.GetSampleSum()))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// monotonicProblems reports every counter, histogram count, bucket and sum
// that is lower in b than in a, and every counter or histogram series that
// disappeared.
func monotonicProblems(a, b *scrape) []string {
	var bad []string
	for name, fa := range a.fams {
		typ := fa.GetType()
		if typ != dto.MetricType_COUNTER && typ != dto.MetricType_HISTOGRAM {
			continue
		}
		later := map[string]*dto.Metric{}
		for _, m := range b.fams[name].GetMetric() {
			later[seriesKey(m)] = m
		}
		for _, m := range fa.GetMetric() {
			id := name + seriesKey(m)
			mb, ok := later[seriesKey(m)]
			if !ok {
				bad = append(bad, id+": series disappeared")
				continue
			}
			if typ == dto.MetricType_COUNTER {
				if x, y := m.GetCounter().GetValue(), mb.GetCounter().GetValue(); y < x {
					bad = append(bad, fmt.Sprintf("%s: counter went down %v → %v", id, x, y))
				}
				continue
			}
			ha, hb := m.GetHistogram(), mb.GetHistogram()
			if hb.GetSampleCount() < ha.GetSampleCount() || hb.GetSampleSum() < ha.GetSampleSum() {
				bad = append(bad, fmt.Sprintf("%s: count/sum went down (%d, %v) → (%d, %v)", id,
					ha.GetSampleCount(), ha.GetSampleSum(), hb.GetSampleCount(), hb.GetSampleSum()))
			}
			bb := map[float64]uint64{}
			for _, k := range hb.GetBucket() {
				bb[k.GetUpperBound()] = k.GetCumulativeCount()
			}
			for _, k := range ha.GetBucket() {
				if bb[k.GetUpperBound()] < k.GetCumulativeCount() {
					bad = append(bad, fmt.Sprintf("%s: bucket le=%v went down", id, k.GetUpperBound()))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}
