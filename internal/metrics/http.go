package metrics

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// excludedHandlers are the routes vLLM's HTTP instrumentation leaves out;
// Middleware passes them through unmeasured.
var excludedHandlers = map[string]bool{
	"/metrics":     true,
	"/health":      true,
	"/load":        true,
	"/ping":        true,
	"/version":     true,
	"/server_info": true,
}

// HTTP holds the HTTP server metrics of prometheus-fastapi-instrumentator's
// defaults that govllm exposes: http_requests_total{handler,method,status}
// with the status grouped as "2xx", "4xx", …, and
// http_request_duration_seconds{handler,method}.
type HTTP struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewHTTP registers the HTTP metrics on reg.
func NewHTTP(reg prometheus.Registerer) (*HTTP, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil Registerer", ErrInvalidOptions)
	}
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "Total number of requests by method, status and handler.",
		}, []string{"method", "status", "handler"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds",
			// The trailing space is part of instrumentator's HELP text.
			Help:    "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important. ",
			Buckets: httpDurationBuckets,
		}, []string{"method", "handler"}),
	}
	if err := reg.Register(h.requests); err != nil {
		return nil, fmt.Errorf("metrics: register http_requests_total: %w", err)
	}
	if err := reg.Register(h.duration); err != nil {
		reg.Unregister(h.requests)
		return nil, fmt.Errorf("metrics: register http_request_duration_seconds: %w", err)
	}
	return h, nil
}

// statusClasses are the status classes Precreate makes: what the server
// answers (1xx and 3xx are never final statuses here).
var statusClasses = []string{"2xx", "4xx", "5xx"}

// Precreate makes the series of handler and method exist at 0 before the
// first request: http_requests_total for each of the 2xx, 4xx and 5xx
// classes, and http_request_duration_seconds, as the vllm:* children are,
// so that rate() and increase() see the first request and the first
// error burst. Excluded handlers (see Middleware) get none.
func (h *HTTP) Precreate(method, handler string) {
	if excludedHandlers[handler] {
		return
	}
	for _, class := range statusClasses {
		h.requests.WithLabelValues(method, class, handler)
	}
	h.duration.WithLabelValues(method, handler)
}

// Middleware measures every request served by next under the route pattern
// handler (e.g. "/v1/completions"): one http_requests_total increment with
// the final status class and one duration observation, taken when next
// returns (so an SSE stream is measured to its end). A request whose handler
// panics before writing a status counts as 5xx. Excluded routes (/metrics,
// /health, /load, /ping, /version, /server_info) get next unchanged. Like
// instrumentator, wrap a catch-all for unmatched paths as handler "none" so
// raw URLs never become label values.
func (h *HTTP) Middleware(handler string, next http.Handler) http.Handler {
	if excludedHandlers[handler] {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		completed := false
		defer func() {
			status := sw.status
			if status == 0 {
				status = http.StatusOK // nothing written: net/http sends 200
				if !completed {
					status = http.StatusInternalServerError
				}
			}
			h.requests.WithLabelValues(r.Method, statusClass(status), handler).Inc()
			h.duration.WithLabelValues(r.Method, handler).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
		completed = true
	})
}

// statusClass groups a status code as instrumentator does: 204 → "2xx".
func statusClass(code int) string {
	switch code / 100 {
	case 1:
		return "1xx"
	case 2:
		return "2xx"
	case 3:
		return "3xx"
	case 4:
		return "4xx"
	case 5:
		return "5xx"
	}
	return strconv.Itoa(code/100) + "xx"
}

// statusWriter records the final status code. It implements http.Flusher
// (SSE) and Unwrap, so http.ResponseController reaches the underlying writer
// for Hijack, deadlines and full-duplex.
type statusWriter struct {
	http.ResponseWriter
	status int // final (non-1xx) status; 0 until written
}

func (w *statusWriter) WriteHeader(code int) {
	// 1xx informational responses (except 101 Switching Protocols) are not final.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends buffered data to the client; a write that has not set a
// status yet sends 200, as net/http does.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer (for http.ResponseController).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Handler serves g in the Prometheus exposition format for GET /metrics: the
// classic text format unless the scraper negotiates another one, gzipped
// when the scraper accepts it (Prometheus does). A scraper that negotiates
// OpenMetrics (Accept: application/openmetrics-text) also gets the
// histograms' exemplars (the request ids); the classic text format has no
// exemplars and is unchanged by them.
//
// The gzip is klauspost/compress's at its fastest level rather than
// promhttp's own (the standard library's default level), which was a third
// of a scrape's CPU: on a saturated server a scrape's latency is its CPU
// time stretched by the contention, so it scales with that cost. The body
// is a few kB either way.
func Handler(g prometheus.Gatherer) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{DisableCompression: true, EnableOpenMetrics: true})
	wrap, err := gzhttp.NewWrapper(gzhttp.CompressionLevel(gzip.BestSpeed))
	if err != nil {
		panic(err) // constant, valid options
	}
	return wrap(h)
}
