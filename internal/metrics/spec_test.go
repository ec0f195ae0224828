package metrics

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"govllm/internal/stats"
)

// specCatalog is vLLM's SpecDecodingProm (vllm/v1/spec_decode/metrics.py),
// written out literally.
var specCatalog = []family{
	{name: "vllm:spec_decode_num_drafts_total", typ: counter, labels: me, help: "Number of spec decoding drafts."},
	{name: "vllm:spec_decode_num_draft_tokens_total", typ: counter, labels: me, help: "Number of draft tokens."},
	{name: "vllm:spec_decode_num_accepted_tokens_total", typ: counter, labels: me, help: "Number of accepted tokens."},
	{name: "vllm:spec_decode_num_accepted_tokens_per_pos_total", typ: counter, labels: with("position"),
		extra: []string{"0", "1", "2"}, help: "Accepted tokens per draft position."},
}

// TestSpecDecodingFamilies: with NumSpeculativeTokens the four counters
// exist at 0 (one position child per draft position) and add a step's
// SpecDecodingStats; without it none is exposed.
func TestSpecDecodingFamilies(t *testing.T) {
	reg := NewRegistry()
	newTestPrometheus(t, reg)
	for _, f := range specCatalog {
		if _, ok := scrape(t, reg)[f.name]; ok {
			t.Fatalf("%s exposed without speculative decoding", f.name)
		}
	}
	reg = NewRegistry()
	opts := testOptions()
	opts.NumSpeculativeTokens = 3
	p, err := NewPrometheus(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, reg)
	for _, f := range specCatalog {
		mf := mfs[f.name]
		if mf == nil || mf.GetType() != f.typ || mf.GetHelp() != f.help || len(mf.GetMetric()) != max(1, len(f.extra)) {
			t.Fatalf("%s: %v", f.name, mf)
		}
		for i, m := range mf.GetMetric() {
			if m.GetCounter().GetValue() != 0 {
				t.Fatalf("%s starts at %g", f.name, m.GetCounter().GetValue())
			}
			if len(f.extra) > 0 && m.GetLabel()[2].GetValue() != f.extra[i] {
				t.Fatalf("%s child %d: position %q", f.name, i, m.GetLabel()[2].GetValue())
			}
		}
	}
	step := &stats.SchedulerStats{SpecDecoding: &stats.SpecDecodingStats{
		NumDrafts: 2, NumDraftTokens: 5, NumAcceptedTokens: 3, NumAcceptedPerPos: []int{2, 1, 0}}}
	p.Record(step, &stats.IterationStats{})
	p.Record(&stats.SchedulerStats{}, &stats.IterationStats{})
	mfs = scrape(t, reg)
	want := map[string][]float64{specCatalog[0].name: {2}, specCatalog[1].name: {5}, specCatalog[2].name: {3}, specCatalog[3].name: {2, 1, 0}}
	for name, vals := range want {
		for i, m := range mfs[name].GetMetric() {
			if got := m.GetCounter().GetValue(); got != vals[i] {
				t.Errorf("%s child %d = %g, want %g", name, i, got, vals[i])
			}
		}
	}
}

// TestSpecDecodingLogLine: an interval with drafts adds vLLM's
// SpecDecoding line (its numbers computed as vLLM's SpecDecodingLogging
// does); one without adds none.
func TestSpecDecodingLogLine(t *testing.T) {
	var buf strings.Builder
	l := NewLogging(slog.New(slog.NewTextHandler(&buf, nil)), time.Second)
	start := l.lastLogTime
	l.Record(&stats.SchedulerStats{SpecDecoding: &stats.SpecDecodingStats{
		NumDrafts: 4, NumDraftTokens: 10, NumAcceptedTokens: 6, NumAcceptedPerPos: []int{4, 2, 0}}}, &stats.IterationStats{NumGenerationTokens: 10})
	l.Log(start.Add(2 * time.Second))
	want := "SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 3.00 tokens/s, Drafted throughput: 5.00 tokens/s, " +
		"Accepted: 6 tokens, Drafted: 10 tokens, Per-position acceptance rate: 1.000, 0.500, 0.000, Avg Draft acceptance rate: 60.0%"
	if !strings.Contains(buf.String(), want) {
		t.Fatalf("log:\n%s\nwant a line with\n%s", buf.String(), want)
	}
	buf.Reset()
	l.Record(&stats.SchedulerStats{}, &stats.IterationStats{NumGenerationTokens: 1})
	l.Log(start.Add(3 * time.Second))
	if strings.Contains(buf.String(), "SpecDecoding") {
		t.Fatalf("an interval without drafts logged %s", buf.String())
	}
}
