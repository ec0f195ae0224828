package runner_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"govllm/internal/cputime"
	"govllm/internal/kvcache"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/tensor"
)

// shapeModel returns the random-weight model of a dummy shape, built once
// per (shape, dtype) (tinyllama-1.1b F32 is 4.4 GB).
func shapeModel(b *testing.B, shape string, dt tensor.DType) *model.Model {
	if shape == "stories110m" {
		return benchModel(b, dt)
	}
	benchModelsMu.Lock()
	defer benchModelsMu.Unlock()
	key := shapeKey{shape, dt}
	if m := shapeModels[key]; m != nil {
		return m
	}
	cfg, err := model.DummyConfig(shape)
	if err != nil {
		b.Fatal(err)
	}
	m := model.NewDummy(cfg, dt, 1)
	shapeModels[key] = m
	return m
}

type shapeKey struct {
	shape string
	dt    tensor.DType
}

var shapeModels = map[shapeKey]*model.Model{}

// BenchmarkDecodeStep measures one served decode step in isolation:
// Runner.Execute of 64 requests, each feeding one token at context 64 and
// sampling one, 2 threads. It splits the step's CPU time per generated
// token into the forward pass (cpu-ms/step-fwd) and the rest (sampling,
// batch building: cpu-ms/step-rest); on a shared machine CPU time is the
// figure to compare. Sampling: temperature 0.8 over the whole vocabulary
// ("temp") or greedy.
func BenchmarkDecodeStep(b *testing.B) {
	const seqs, ctx, blockSize = 64, 64, 16
	for _, c := range []struct {
		shape string
		dt    tensor.DType
	}{{"stories110m", tensor.F32}, {"tinyllama-1.1b", tensor.F32}, {"tinyllama-1.1b", tensor.Q8_0}} {
		for _, mode := range []string{"temp", "greedy"} {
			name := fmt.Sprintf("%s-%s/seqs=%d/%s", c.shape, map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[c.dt], seqs, mode)
			b.Run(name, func(b *testing.B) {
				m := shapeModel(b, c.shape, c.dt)
				pool := tensor.NewPool(2)
				defer pool.Close()
				per := (ctx + 1 + blockSize - 1) / blockSize
				r, err := runner.New(m, pool, runner.Config{
					NumBlocks: seqs * per, BlockSize: blockSize,
					MaxNumBatchedTokens: seqs, MaxNumSeqs: seqs, EOSTokenID: 2,
				})
				if err != nil {
					b.Fatal(err)
				}
				p := sampling.Default()
				if mode == "temp" {
					p.Temperature = 0.8
				} else {
					p.Temperature = 0
				}
				p.IgnoreEOS = true
				rng := sampling.NewRNG(7)
				so := &sched.SchedulerOutput{TotalNumScheduledTokens: seqs}
				for s := range seqs {
					prompt := make([]int32, ctx)
					for j := range prompt {
						prompt[j] = int32(3 + rng.Uint64()%31000)
					}
					bt := make([]kvcache.BlockID, per)
					for i := range bt {
						bt[i] = kvcache.BlockID(i*seqs + s) // interleaved, as a busy pool
					}
					so.Requests = append(so.Requests, sched.ScheduledRequest{
						ID: sched.RequestID(fmt.Sprint(s)), TokenIDs: []int32{int32(3 + s)}, Start: ctx,
						BlockTable: bt, Sample: true, Params: &p, PromptTokenIDs: prompt,
					})
				}
				r.TimePhases()
				if _, err := r.Execute(context.Background(), so); err != nil {
					b.Fatal(err)
				}
				before := r.Stats()
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cputime.Process()
				for b.Loop() {
					if _, err := r.Execute(context.Background(), so); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cputime.Process() - cpu0
				st := r.Stats()
				n := float64(st.Steps - before.Steps)
				fwd := (st.Forward - before.Forward).Seconds()
				exe := (st.Execute - before.Execute).Seconds()
				smp := (st.Sample - before.Sample).Seconds()
				// Wall shares of the step turned into CPU time: the forward
				// runs on both threads, the rest mostly too (sampling is
				// parallel) or on the caller alone (batch building).
				b.ReportMetric(cpu.Seconds()*1e3/n, "cpu-ms/step")
				b.ReportMetric(float64(seqs)*n/cpu.Seconds(), "tok/cpu-s")
				b.ReportMetric(exe*1e3/n, "ms/step")
				b.ReportMetric(fwd/exe*100, "%fwd")
				b.ReportMetric(smp/exe*100, "%sample")
				ph, ph0 := st.Phases, before.Phases
				for _, p := range []struct {
					name string
					d    time.Duration
				}{
					{"%matmul", ph.MatMul - ph0.MatMul}, {"%attn", ph.Attention - ph0.Attention},
					{"%rows", ph.Rows - ph0.Rows}, {"%logits", ph.Logits - ph0.Logits}, {"%fwd-other", ph.Other - ph0.Other},
				} {
					b.ReportMetric(p.d.Seconds()/exe*100, p.name)
				}
			})
		}
	}
}
