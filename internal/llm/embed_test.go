package llm

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"govllm/internal/pooling"
	"govllm/internal/stats"
)

// embed runs embedding requests for prompts on the real model through the
// sync engine (one batch, continuous batching as for generation) and
// returns each pooled vector and finish reason, in order.
func (s *stories) embed(t *testing.T, o coreOpts, p pooling.Params, prompts [][]int32, loggers ...StatLogger) [][]float32 {
	t.Helper()
	c, g := s.core(t, o)
	g.Open()
	e, err := New(Config{}, c, s.tok, loggers...)
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]Request, len(prompts))
	for i, ids := range prompts {
		reqs[i] = Request{ID: fmt.Sprintf("emb-%d", i), PromptTokenIDs: ids, Pooling: &p}
	}
	outs, err := e.Generate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, len(outs))
	for i, o := range outs {
		c := o.Outputs[0]
		if !o.Finished || c.FinishReason != stats.FinishStop || len(c.TokenIDs) != 0 || c.Text != "" || c.Pooled == nil {
			t.Fatalf("request %d: %+v", i, o)
		}
		vecs[i] = c.Pooled
	}
	return vecs
}

// TestEmbeddingsMatchReference: the pooled vectors of the served model
// equal LAST, MEAN and CLS pooling (normalized or not) of the final hidden
// states computed by an independent float64 forward pass over llama2.c's
// checkpoint of the same model (run.c's algorithm), within float32
// rounding; prompts are cut into prefill chunks by a small token budget.
func TestEmbeddingsMatchReference(t *testing.T) {
	s := loadStories(t)
	ref := loadRefModel(t)
	prompts := [][]int32{s.prompt, s.tok.Encode("The cat sat on the mat and looked at the big red ball.", true), {1, 300}}
	want := make([][][]float64, len(prompts))
	for i, p := range prompts {
		want[i] = ref.hiddenStates(p)
	}
	for _, typ := range []pooling.Type{pooling.Last, pooling.Mean, pooling.CLS} {
		for _, norm := range []bool{true, false} {
			p := pooling.Params{Type: typ, Normalize: norm}
			t.Run(fmt.Sprintf("%v/normalize=%v", typ, norm), func(t *testing.T) {
				got := s.embed(t, coreOpts{budget: 16}, p, prompts)
				for i := range prompts {
					w := refPool(want[i], typ.String(), norm)
					if d := maxAbsDiff(got[i], w); d > 2e-5 || len(got[i]) != ref.dim {
						t.Errorf("prompt %d: max |diff| %g (len %d)\n got %v\nwant %v", i, d, len(got[i]), got[i][:4], w[:4])
					}
				}
			})
		}
	}
}

func maxAbsDiff(a []float32, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-b[i]))
	}
	return d
}

// TestEmbeddingsBatchInvariant: an input's embedding is the same bits
// alone and in one batch with copies of itself and other inputs, under
// chunked prefill and with prefix caching (LAST takes cached prefixes;
// MEAN and CLS compute every token).
func TestEmbeddingsBatchInvariant(t *testing.T) {
	s := loadStories(t)
	a := s.tok.Encode("Once upon a time there was a little girl named Lily who loved to play in the park.", true)
	b := s.tok.Encode("One day, she saw a big, red ball.", false) // no BOS: CLS differs too
	for _, typ := range []pooling.Type{pooling.Last, pooling.Mean, pooling.CLS} {
		for _, o := range []coreOpts{{budget: 16}, {budget: 16, prefixCaching: true}, {budget: 512, prefixCaching: true}} {
			t.Run(fmt.Sprintf("%v/%+v", typ, o), func(t *testing.T) {
				p := pooling.Params{Type: typ, Normalize: true}
				alone := s.embed(t, o, p, [][]int32{a})[0]
				batch := s.embed(t, o, p, [][]int32{b, a, a, b, a})
				for _, i := range []int{1, 2, 4} {
					if !slices.Equal(batch[i], alone) {
						t.Errorf("batch member %d differs from the input alone", i)
					}
				}
				if slices.Equal(batch[0], alone) {
					t.Error("different inputs gave the same vector")
				}
			})
		}
	}
}

// TestEmbeddingsMetrics: embedding requests move the vllm:* families as
// vLLM's stats code moves them for pooling requests
// (IterationStats.update_from_output and update_from_finished_request,
// with no new tokens): the prompt tokens, one TTFT each (the time to the
// pooled vector), finished with reason stop, prefill and e2e latencies,
// zero generated tokens and no inter-token latency, and no max_tokens
// (vLLM's max_tokens_param is None for them).
func TestEmbeddingsMetrics(t *testing.T) {
	s := loadStories(t)
	prompts := [][]int32{s.prompt, s.tok.Encode("One day, she saw a big, red ball.", true), s.prompt}
	reg, prom := newPrometheus(t, 512)
	s.embed(t, coreOpts{budget: 16}, pooling.Default(), prompts, prom)
	sc := scrapeRegistry(t, reg)
	n, p := float64(len(prompts)), float64(len(prompts[0])+len(prompts[1])+len(prompts[2]))
	for _, row := range []struct {
		name      string
		got, want float64
	}{
		{"prompt_tokens_total", sc.get(t, "vllm:prompt_tokens").Value, p},
		{"generation_tokens_total", sc.get(t, "vllm:generation_tokens").Value, 0},
		{"request_success_total{stop}", sc.get(t, "vllm:request_success", "finished_reason", "stop").Value, n},
		{"time_to_first_token_seconds_count", float64(sc.get(t, "vllm:time_to_first_token_seconds").Count), n},
		{"inter_token_latency_seconds_count", float64(sc.get(t, "vllm:inter_token_latency_seconds").Count), 0},
		{"e2e_request_latency_seconds_count", float64(sc.get(t, "vllm:e2e_request_latency_seconds").Count), n},
		{"request_prefill_time_seconds_count", float64(sc.get(t, "vllm:request_prefill_time_seconds").Count), n},
		{"request_decode_time_seconds_sum", sc.get(t, "vllm:request_decode_time_seconds").Sum, 0},
		{"request_prompt_tokens_sum", sc.get(t, "vllm:request_prompt_tokens").Sum, p},
		{"request_generation_tokens_count", float64(sc.get(t, "vllm:request_generation_tokens").Count), n},
		{"request_generation_tokens_sum", sc.get(t, "vllm:request_generation_tokens").Sum, 0},
		{"request_params_max_tokens_count", float64(sc.get(t, "vllm:request_params_max_tokens").Count), 0},
		{"num_requests_running", sc.get(t, "vllm:num_requests_running").Value, 0},
		{"kv_cache_usage_perc", sc.get(t, "vllm:kv_cache_usage_perc").Value, 0},
	} {
		if row.got != row.want {
			t.Errorf("%s = %g, want %g", row.name, row.got, row.want)
		}
	}
	if sum := sc.get(t, "vllm:request_prefill_time_seconds").Sum; sum <= 0 {
		t.Errorf("prefill time sum %g: the pooled output should stamp the end of prefill", sum)
	}
}
