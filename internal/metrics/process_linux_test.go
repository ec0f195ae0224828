package metrics

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

// gatherOne gathers c alone: each family's first value by name.
func gatherOne(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry() // also checks Describe against Collect
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		m := f.GetMetric()[0]
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			out[f.GetName()] = m.GetCounter().GetValue()
		default:
			out[f.GetName()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestProcessCollectorMatchesClientGolang: the lean collector exposes
// client_golang's process_* series but the two network ones, with the same
// values (the moving ones within reason).
func TestProcessCollectorMatchesClientGolang(t *testing.T) {
	lean, err := newProcessCollector()
	if err != nil {
		t.Fatal(err)
	}
	got := gatherOne(t, lean)
	want := gatherOne(t, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	delete(want, "process_network_receive_bytes_total")
	delete(want, "process_network_transmit_bytes_total")
	names := func(m map[string]float64) []string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		slices.Sort(s)
		return s
	}
	if !slices.Equal(names(got), names(want)) {
		t.Fatalf("series %v, want %v", names(got), names(want))
	}
	for _, c := range []struct {
		name string
		tol  float64 // absolute
	}{
		// The kernel's boot time (btime, whole seconds, behind the start
		// time) can step by a second when the clock is adjusted; ours is
		// read once, client_golang's at each scrape.
		{"process_start_time_seconds", 1.02},
		{"process_max_fds", 0},
		{"process_virtual_memory_max_bytes", 0},
		{"process_open_fds", 8},
		{"process_cpu_seconds_total", 1},
		{"process_resident_memory_bytes", 64 << 20},
		{"process_virtual_memory_bytes", 256 << 20},
	} {
		if d := got[c.name] - want[c.name]; d < -c.tol || d > c.tol {
			t.Errorf("%s = %g, client_golang's %g", c.name, got[c.name], want[c.name])
		}
	}
	if st := got["process_start_time_seconds"]; st > float64(time.Now().Unix())+1 || st < float64(time.Now().Add(-24*time.Hour).Unix()) {
		t.Errorf("start time %g is not within the last day", st)
	}
	if got["process_open_fds"] < 3 || got["process_resident_memory_bytes"] <= 0 {
		t.Errorf("implausible values %v", got)
	}
}
