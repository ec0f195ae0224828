package llm

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/core"
	"govllm/internal/cputime"
	"govllm/internal/metrics"
	"govllm/internal/output"
	"govllm/internal/sched"
	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

// benchWorkload: 32 requests, prompt 16, 64 forced tokens.
const benchN, benchP, benchM = 32, 16, 64

func benchRequests(round int) []Request {
	reqs := make([]Request, benchN)
	for i := range reqs {
		reqs[i] = Request{ID: fmt.Sprintf("b%d-%d", round, i), PromptTokenIDs: prompt(i, benchP), Params: forced(benchM)}
	}
	return reqs
}

func benchCore(b *testing.B) *core.Engine {
	cfg := core.DefaultConfig()
	c, err := core.New(cfg, &core.FakeExecutor{Vocab: testVocab})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// statsModes: "off" has no stat logger (no IterationStats is built);
// "on" feeds vLLM's Prometheus catalog on a fresh registry.
func statsLoggers(b *testing.B, on bool) []StatLogger {
	if !on {
		return nil
	}
	p, err := metrics.NewPrometheus(prometheus.NewRegistry(), metrics.PrometheusOptions{ModelName: "bench", MaxModelLen: llmConfig(coreOpts{}).MaxModelLen})
	if err != nil {
		b.Fatal(err)
	}
	return []StatLogger{p}
}

// BenchmarkSyncThroughput measures generated tokens per second through the
// sync Engine on the fake executor, with and without statistics. The fake
// executor costs almost nothing, so the ratio is a worst case for the
// statistics' share of a step.
func BenchmarkSyncThroughput(b *testing.B) {
	tok := tokenizer.NewDummy(testVocab)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("stats=%v", on), func(b *testing.B) {
			e, err := New(DefaultConfig(), benchCore(b), tok, statsLoggers(b, on)...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			round := 0
			cpu0 := cputime.Process()
			for b.Loop() {
				round++
				if _, err := e.Generate(context.Background(), benchRequests(round)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(round), "cpu-ns/op")
			b.ReportMetric(float64(round*benchN*benchM)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkAsyncThroughput is the same workload through the AsyncEngine,
// every request read by its own streaming consumer.
func BenchmarkAsyncThroughput(b *testing.B) {
	tok := tokenizer.NewDummy(testVocab)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("stats=%v", on), func(b *testing.B) {
			a, err := NewAsyncEngine(DefaultConfig(), benchCore(b), tok, statsLoggers(b, on)...)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				round++
				var wg sync.WaitGroup
				for _, r := range benchRequests(round) {
					r.OutputKind = output.Delta
					s, err := a.Generate(context.Background(), r)
					if err != nil {
						b.Fatal(err)
					}
					wg.Go(func() {
						for {
							if _, err := s.Next(context.Background()); err != nil {
								return
							}
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(round*benchN*benchM)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkStoriesThroughput is the same comparison on the real
// stories260K model through the CPU runner (sync Engine, 32 requests of
// "Once upon a time", 64 forced greedy tokens).
func BenchmarkStoriesThroughput(b *testing.B) {
	s := loadStories(b)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("stats=%v", on), func(b *testing.B) {
			c, g := s.core(b, coreOpts{})
			g.Open()
			e, err := New(Config{}, c, s.tok, statsLoggers(b, on)...)
			if err != nil {
				b.Fatal(err)
			}
			round := 0
			cpu0 := cputime.Process()
			for b.Loop() {
				round++
				reqs := make([]Request, benchN)
				for i := range reqs {
					reqs[i] = Request{ID: fmt.Sprintf("s%d-%d", round, i), PromptTokenIDs: s.prompt, Params: forced(benchM)}
				}
				if _, err := e.Generate(context.Background(), reqs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(round), "cpu-ns/op")
			b.ReportMetric(float64(round*benchN*benchM)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkSeam measures one decode step of 32 requests through the seam
// (process + record) alone, with and without statistics: the per-step cost
// the statistics add, to set against a real step's forward pass.
func BenchmarkSeam(b *testing.B) {
	tok := tokenizer.NewDummy(testVocab)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("stats=%v", on), func(b *testing.B) {
			p := newPipeline(tok, statsLoggers(b, on))
			co := sched.CoreOutputs{SchedulerStats: &stats.SchedulerStats{NumRunningReqs: benchN, KVCacheUsage: 0.5}}
			for i := range benchN {
				params := forced(1 << 30)
				id := fmt.Sprintf("r%d", i)
				if _, err := p.proc.AddRequest(output.Request{ID: id, PromptTokenIDs: prompt(i, benchP), Params: params, ArrivalTime: time.Now()}); err != nil {
					b.Fatal(err)
				}
				co.Outputs = append(co.Outputs, sched.CoreOutput{ReqID: sched.RequestID(id), NewTokenIDs: []int32{300 + int32(i)}, StopReason: -1})
			}
			b.ReportAllocs()
			for b.Loop() {
				co.Timestamp = time.Now()
				p.handle(&co)
			}
		})
	}
}
