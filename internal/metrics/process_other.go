//go:build !linux

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// newProcessCollector is client_golang's process collector where there is
// no /proc (see process_linux.go).
func newProcessCollector() (prometheus.Collector, error) {
	return collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), nil
}
