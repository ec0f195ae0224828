package metrics

import (
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// ExemplarLabel is the label of the exemplars on the TTFT, inter-token
// latency and e2e latency histograms: the request id the server logs
// (docs/metrics.md, exemplars).
const ExemplarLabel = "request_id"

// MaxExemplarIDRunes is the longest request id an exemplar carries whole:
// OpenMetrics caps an exemplar's label names and values at 128 UTF-8 runes
// in total (prometheus.ExemplarMaxRunes), of which the label name takes 10.
// A longer id is cut to its first MaxExemplarIDRunes runes, a prefix of the
// id in the log.
const MaxExemplarIDRunes = prometheus.ExemplarMaxRunes - len(ExemplarLabel)

// exemplarObserver is a histogram child that takes exemplars.
type exemplarObserver interface {
	prometheus.Observer
	prometheus.ExemplarObserver
}

// observeWithID observes v with the exemplar {request_id="id"}, or without
// an exemplar when id is empty. The histogram keeps the latest exemplar of
// each bucket; only the OpenMetrics exposition shows them.
func observeWithID(o exemplarObserver, v float64, id string) {
	if id == "" {
		o.Observe(v)
		return
	}
	o.ObserveWithExemplar(v, prometheus.Labels{ExemplarLabel: exemplarID(id)})
}

// exemplarID makes id a valid exemplar label value: valid UTF-8 (invalid
// bytes become U+FFFD) and at most MaxExemplarIDRunes runes, cut at a rune
// boundary. client_golang panics on an exemplar over the limit, so this
// must hold for any id a library caller chooses.
func exemplarID(id string) string {
	if !utf8.ValidString(id) {
		id = strings.ToValidUTF8(id, "\uFFFD")
	}
	if utf8.RuneCountInString(id) <= MaxExemplarIDRunes {
		return id
	}
	n := 0
	for i := range id {
		if n == MaxExemplarIDRunes {
			return id[:i]
		}
		n++
	}
	return id
}
