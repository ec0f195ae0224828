package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/core"
	"govllm/internal/kvcache"
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

// TestIterationTokensOnlyForStepsThatRan drives the scheduler (with the
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
			steps := runFrontEnd(t, prom, []output.Request{{ID: "r", PromptTokenIDs: prompt, Params: params, ArrivalTime: time.Now()}}, tt.abortAfter)
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

// runFrontEnd runs requests through the scheduler and the FakeExecutor
// until no work is left, recording every step as the front end's seam
// does, and returns the number of steps. The clients cancel every request
// after abortAfter steps (never when negative).
func runFrontEnd(t *testing.T, prom *Prometheus, reqs []output.Request, abortAfter int) int {
	t.Helper()
	cfg := core.DefaultConfig()
	kv, err := kvcache.NewManager(cfg.KV)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sched.New(cfg.Sched, kv)
	if err != nil {
		t.Fatal(err)
	}
	exec := &core.FakeExecutor{Vocab: 26, NumBlocks: cfg.KV.NumBlocks, BlockSize: cfg.KV.BlockSize}
	proc := output.NewProcessor(func([]int32, *sampling.Params) output.Decoder { return letterDecoder{} })
	for _, r := range reqs {
		ids, err := proc.AddRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			er := sched.EngineRequest{ID: id, PromptTokenIDs: r.PromptTokenIDs, Params: output.ChildParams(r.Params, i), EOSTokenID: -1}
			if err := s.AddRequest(er); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := 0
	for ; s.HasRequests() || s.HasPendingOutputs(); steps++ {
		if steps == abortAfter {
			for _, r := range reqs {
				s.Abort(proc.Abort(r.ID)...)
			}
		}
		so := s.Schedule()
		var ro *sched.RunnerOutput
		if len(so.Requests) > 0 {
			if ro, err = exec.Execute(context.Background(), so); err != nil {
				t.Fatal(err)
			}
		}
		co := s.UpdateFromOutput(so, ro)
		var it *stats.IterationStats
		if len(co.Outputs) > 0 {
			it = stats.NewIterationStats(time.Now())
		}
		_, stops := proc.Process(&co, it)
		prom.Record(co.SchedulerStats, it)
		s.Abort(stops...)
	}
	return steps
}

// TestPrefixCacheHitsWithinAStep: sequences admitted in one step share the
// full prompt blocks of those admitted before them, as in vLLM (which
// registers full blocks at allocation): with vLLM's block size of 16,
// n = 3 on a 57-token prompt queries 3 × 57 tokens and hits 3 full blocks
// for each of the last two sequences, 96 tokens; parallel requests with a
// shared 64-token system prompt hit it from the second on.
func TestPrefixCacheHitsWithinAStep(t *testing.T) {
	p57 := make([]int32, 57)
	for i := range p57 {
		p57[i] = int32(i % 26)
	}
	tests := []struct {
		name                  string
		reqs                  []output.Request
		wantQueries, wantHits float64
	}{
		{
			name:        "n=3, 57-token prompt",
			reqs:        []output.Request{{ID: "r", PromptTokenIDs: p57, Params: sampling.Params{N: 3, MaxTokens: 2}}},
			wantQueries: 3 * 57, wantHits: 96,
		},
		{
			name:        "three requests with a shared 4-block system prompt",
			reqs:        []output.Request{sharedPrefix("a", 5), sharedPrefix("b", 9), sharedPrefix("c", 20)},
			wantQueries: 69 + 73 + 84, wantHits: 2 * 64,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			runFrontEnd(t, newTestPrometheus(t, reg), tt.reqs, -1)
			got := flatten(t, scrape(t, reg))
			if q, h := got["vllm:prefix_cache_queries_total"], got["vllm:prefix_cache_hits_total"]; q != tt.wantQueries || h != tt.wantHits {
				t.Errorf("prefix cache queries %g, hits %g; want %g, %g", q, h, tt.wantQueries, tt.wantHits)
			}
		})
	}
}

// sharedPrefix is a request whose prompt is a 64-token system prompt (4
// blocks of 16) followed by n tokens of its own.
func sharedPrefix(id string, n int) output.Request {
	p := make([]int32, 0, 64+n)
	for i := range 64 {
		p = append(p, int32(i%26))
	}
	for i := range n {
		p = append(p, int32((len(id)*7+int(id[0])+i)%26))
	}
	return output.Request{ID: id, PromptTokenIDs: p, Params: sampling.Params{N: 1, MaxTokens: 2}}
}
