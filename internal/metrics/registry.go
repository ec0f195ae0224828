package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns a fresh registry holding the Go runtime (go_*) and
// process (process_*) collectors, the analogue of the python_* and process_*
// metrics of a single-process vLLM server.
func NewRegistry() *prometheus.Registry {
	proc, err := newProcessCollector()
	if err != nil {
		proc = collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), proc)
	return reg
}
