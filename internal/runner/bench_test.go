package runner_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"govllm/internal/core"
	"govllm/internal/cputime"
	"govllm/internal/kvcache"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/tensor"
)

var (
	benchModelsMu sync.Mutex
	benchModels   = map[tensor.DType]*model.Model{}
)

// benchModel returns the random-weight stories110m-shape model, built once
// per dtype.
func benchModel(b *testing.B, dt tensor.DType) *model.Model {
	benchModelsMu.Lock()
	defer benchModelsMu.Unlock()
	if m := benchModels[dt]; m != nil {
		return m
	}
	cfg, err := model.DummyConfig("stories110m")
	if err != nil {
		b.Fatal(err)
	}
	m := model.NewDummy(cfg, dt, 1)
	benchModels[dt] = m
	return m
}

// BenchmarkEngine measures end-to-end engine throughput: N concurrent
// requests (32-token prompts, 64 sampled output tokens each, temperature
// 0.8) through core.Engine.Step loops over a Runner on a
// random-weight stories110m-shape model. Metrics:
//
//	gen-tok/s            generated tokens per second of the whole run
//	gen-tok/cpu-s        the same per CPU-second of the process (steadier
//	                     on a shared machine)
//	ns/step              wall time of one Engine.Step
//	ns/step-outside-fwd  Step time minus the model's forward pass:
//	                     scheduling, batch preparation, sampling, output update
//	ns/step-sample       of which sampling
func BenchmarkEngine(b *testing.B) {
	const promptLen, outLen, blockSize = 32, 64, 16
	threads := runtime.GOMAXPROCS(0)
	for _, dt := range []struct {
		name string
		dt   tensor.DType
	}{{"F32", tensor.F32}, {"Q8_0", tensor.Q8_0}} {
		for _, n := range []int{1, 8, 32, 64} {
			b.Run(fmt.Sprintf("%s/seqs=%d", dt.name, n), func(b *testing.B) {
				m := benchModel(b, dt.dt)
				pool := tensor.NewPool(threads)
				defer pool.Close()
				numBlocks := n*((promptLen+outLen+blockSize-1)/blockSize) + 8
				r, err := runner.New(m, pool, runner.Config{
					NumBlocks: numBlocks, BlockSize: blockSize,
					MaxNumBatchedTokens: 2048, MaxNumSeqs: max(n, 1), EOSTokenID: 2,
				})
				if err != nil {
					b.Fatal(err)
				}
				rng := sampling.NewRNG(uint64(n))
				var steps, generated int64
				var stepTime time.Duration
				before := r.Stats()
				b.ResetTimer()
				cpu0 := cputime.Process()
				for b.Loop() {
					eng, err := core.New(core.Config{
						Sched: sched.Config{
							MaxNumSeqs: n, MaxNumBatchedTokens: 2048, MaxModelLen: promptLen + outLen,
							Policy: sched.FCFS, EnableChunkedPrefill: true,
						},
						// Prefix caching off: every iteration computes every prompt.
						KV: kvcache.Config{NumBlocks: numBlocks, BlockSize: blockSize},
					}, r)
					if err != nil {
						b.Fatal(err)
					}
					for i := range n {
						prompt := make([]int32, promptLen)
						prompt[0] = 1
						for j := 1; j < promptLen; j++ {
							prompt[j] = int32(3 + rng.Uint64()%31000)
						}
						p := sampling.Default()
						// No top_p: random weights give nearly flat logits, the
						// worst case of the nucleus search (the whole vocabulary),
						// which real models' peaked distributions never hit.
						p.Temperature = 0.8
						p.MaxTokens, p.IgnoreEOS = outLen, true
						if err := eng.AddRequest(sched.EngineRequest{
							ID: sched.RequestID(fmt.Sprint(i)), PromptTokenIDs: prompt, Params: p, EOSTokenID: 2,
						}); err != nil {
							b.Fatal(err)
						}
					}
					for eng.HasWork() {
						t0 := time.Now()
						co, err := eng.Step(context.Background())
						stepTime += time.Since(t0)
						if err != nil {
							b.Fatal(err)
						}
						steps++
						for _, o := range co.Outputs {
							generated += int64(len(o.NewTokenIDs))
						}
					}
				}
				elapsed := b.Elapsed()
				cpu := cputime.Process() - cpu0
				st := r.Stats()
				fwd := st.Forward - before.Forward
				smp := st.Sample - before.Sample
				if want := int64(b.N) * int64(n*outLen); generated != want {
					b.Fatalf("generated %d tokens, want %d", generated, want)
				}
				b.ReportMetric(float64(generated)/elapsed.Seconds(), "gen-tok/s")
				if cpu > 0 {
					b.ReportMetric(float64(generated)/cpu.Seconds(), "gen-tok/cpu-s")
				}
				b.ReportMetric(float64(stepTime.Nanoseconds())/float64(steps), "ns/step")
				b.ReportMetric(float64((stepTime-fwd).Nanoseconds())/float64(steps), "ns/step-outside-fwd")
				b.ReportMetric(float64(smp.Nanoseconds())/float64(steps), "ns/step-sample")
			})
		}
	}
}
