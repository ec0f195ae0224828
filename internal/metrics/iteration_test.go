package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/core"
	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// letterDecoder spells token id t as the letter 'a'+t (FakeExecutor with
// Vocab 26).
type letterDecoder struct{}

func (letterDecoder) Add(id int32) string { return string(rune('a' + id)) }
func (letterDecoder) Flush() string       { return "" }

// fakeOutputs is the FakeExecutor's output tokens for a request with the
// given prompt (vocab 26, no EOS).
func fakeOutputs(id string, prompt []int32, n int) []int32 {
	toks := append([]int32(nil), prompt...)
	for range n {
		toks = append(toks, core.FakeToken(sched.RequestID(id), len(toks), toks[len(toks)-1], 26))
	}
	return toks[len(prompt):]
}

// TestIterationTokensOnlyForStepsThatRan drives the engine core (with the
// FakeExecutor), the output processor and a fresh Prometheus the way the
// front end does (an IterationStats for every step with outputs; stop
// strings and client cancellations aborted in the core), and checks
// iteration_tokens_total against vLLM: one observation per engine step
// whose outputs carry tokens (1 prefill step + one step per further
// token), none for the step that only reports an abort.
func TestIterationTokensOnlyForStepsThatRan(t *testing.T) {
	prompt := []int32{1, 2, 3, 4, 5}
	const P, M = 5, 6
	out := fakeOutputs("r", prompt, M)
	// The stop string is the 4th output token's letter; the request stops
	// at its first occurrence.
	stopAt := 0
	for stopAt < M && out[stopAt] != out[3] {
		stopAt++
	}
	stopAt++ // output tokens up to and including the stop string
	tests := []struct {
		name       string
		stop       []string
		abortAfter int // client cancellation after this many steps; -1 never
		wantSteps  int // steps with outputs that carry tokens
		wantReason string
	}{
		{name: "runs to max_tokens", abortAfter: -1, wantSteps: M, wantReason: "length"},
		{name: "stop string", stop: []string{string(rune('a' + out[3]))}, abortAfter: -1, wantSteps: stopAt, wantReason: "stop"},
		{name: "client abort while running", abortAfter: 3, wantSteps: 3, wantReason: "abort"},
		{name: "client abort while waiting", abortAfter: 0, wantSteps: 0, wantReason: "abort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			prom := newTestPrometheus(t, reg)
			params := sampling.Params{N: 1, MaxTokens: M, Stop: tt.stop}
			steps := runFrontEnd(t, prom, prompt, params, tt.abortAfter)
			got := flatten(t, scrape(t, reg))
			if tt.wantReason != "length" && steps != tt.wantSteps+1 {
				t.Fatalf("%d engine steps, want %d and one that reports the abort", steps, tt.wantSteps)
			}
			if c := got["vllm:iteration_tokens_total_count"]; c != float64(tt.wantSteps) {
				t.Errorf("iteration_tokens_total_count = %g over %d steps, want %d", c, steps, tt.wantSteps)
			}
			wantSum := 0
			if tt.wantSteps > 0 {
				wantSum = P + tt.wantSteps
			}
			if s := got["vllm:iteration_tokens_total_sum"]; s != float64(wantSum) {
				t.Errorf("iteration_tokens_total_sum = %g, want %d", s, wantSum)
			}
			key := `vllm:request_success_total{finished_reason="` + tt.wantReason + `"}`
			if got[key] != 1 {
				t.Errorf("%s = %g, want 1 (the finish is recorded)", key, got[key])
			}
		})
	}
}

// runFrontEnd runs one request through the core until the core has no
// work, recording every step as the front end's seam does, and returns the
// number of steps. The client cancels the request after abortAfter steps
// (never when negative).
func runFrontEnd(t *testing.T, prom *Prometheus, prompt []int32, params sampling.Params, abortAfter int) int {
	t.Helper()
	c, err := core.New(core.DefaultConfig(), &core.FakeExecutor{Vocab: 26})
	if err != nil {
		t.Fatal(err)
	}
	proc := output.NewProcessor(func([]int32) output.Decoder { return letterDecoder{} })
	ids, err := proc.AddRequest(output.Request{ID: "r", PromptTokenIDs: prompt, Params: params, ArrivalTime: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddRequest(sched.EngineRequest{ID: ids[0], PromptTokenIDs: prompt, Params: params, EOSTokenID: -1}); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for c.HasWork() {
		if steps == abortAfter {
			c.Abort(proc.Abort("r")...)
		}
		co, err := c.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		steps++
		var it *stats.IterationStats
		if len(co.Outputs) > 0 {
			it = stats.NewIterationStats(time.Now())
		}
		_, stops := proc.Process(&co, it)
		prom.Record(co.SchedulerStats, it)
		c.Abort(stops...)
	}
	return steps
}
