package metrics

import (
	"fmt"
	"math"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Kind is the type of a snapshot Metric.
type Kind uint8

const (
	KindCounter Kind = iota + 1
	KindGauge
	KindHistogram
)

func (k Kind) String() string {
	switch k {
	case KindCounter:
		return "counter"
	case KindGauge:
		return "gauge"
	case KindHistogram:
		return "histogram"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Bucket is one cumulative histogram bucket: Count observations ≤ UpperBound.
// The last bucket of a histogram has UpperBound +Inf and Count == Metric.Count.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Metric is one series of a snapshot (vLLM reader.py Counter/Gauge/Histogram).
type Metric struct {
	// Name is the family name; counters drop the exposed "_total" suffix as
	// vLLM's reader does ("vllm:prompt_tokens").
	Name   string
	Labels map[string]string
	Kind   Kind
	// Value is the counter or gauge value.
	Value float64
	// Buckets, Sum and Count describe a histogram.
	Buckets []Bucket
	Sum     float64
	Count   uint64
}

// Snapshot reads every vllm:* series from g (vLLM get_metrics_snapshot),
// and govllm's own govllm:* ones:
// one Metric per label set, ordered by family name then label values.
// Families of other types (summaries, untyped) are skipped.
func Snapshot(g prometheus.Gatherer) ([]Metric, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("metrics: snapshot: %w", err)
	}
	var out []Metric
	for _, mf := range families {
		name := mf.GetName()
		if !strings.HasPrefix(name, "vllm:") && !strings.HasPrefix(name, "govllm:") {
			continue
		}
		var kind Kind
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			kind = KindCounter
			name = strings.TrimSuffix(name, "_total")
		case dto.MetricType_GAUGE:
			kind = KindGauge
		case dto.MetricType_HISTOGRAM:
			kind = KindHistogram
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			s := Metric{Name: name, Kind: kind, Labels: make(map[string]string, len(m.GetLabel()))}
			for _, lp := range m.GetLabel() {
				s.Labels[lp.GetName()] = lp.GetValue()
			}
			switch kind {
			case KindCounter:
				s.Value = m.GetCounter().GetValue()
			case KindGauge:
				s.Value = m.GetGauge().GetValue()
			case KindHistogram:
				h := m.GetHistogram()
				s.Sum, s.Count = h.GetSampleSum(), h.GetSampleCount()
				s.Buckets = make([]Bucket, 0, len(h.GetBucket())+1)
				for _, b := range h.GetBucket() {
					s.Buckets = append(s.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: b.GetCumulativeCount()})
				}
				if n := len(s.Buckets); n == 0 || !math.IsInf(s.Buckets[n-1].UpperBound, +1) {
					s.Buckets = append(s.Buckets, Bucket{UpperBound: math.Inf(+1), Count: s.Count})
				}
			}
			out = append(out, s)
		}
	}
	return out, nil
}
