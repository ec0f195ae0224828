package llm

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"govllm/internal/core"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sampling"
	"govllm/internal/stats"
	"govllm/internal/testmodels"
	"govllm/internal/tokenizer"
)

// stories is the real stories260K model with its tokenizer and the greedy
// golden continuation of "Once upon a time" from llama2.c's run.c.
type stories struct {
	model  *model.Model
	tok    *tokenizer.Tokenizer
	prompt []int32 // BOS first
	golden []int32 // greedy output ids after the prompt
}

func loadStories(t testing.TB) *stories {
	t.Helper()
	dir := testmodels.Dir(t, "stories260K")
	gguf := filepath.Join(dir, "stories260K.gguf")
	m, err := model.Load(gguf, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(gguf, tokenizer.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := testmodels.LoadGolden(t, "once_upon_a_time")
	s := &stories{model: m, tok: tok, prompt: g.PromptIDs(), golden: g.Continuation()}
	return s
}

// core returns an engine core running the real model on the CPU runner.
func (s *stories) core(t testing.TB, o coreOpts) (*core.Engine, *gate) {
	t.Helper()
	cfg := core.DefaultConfig()
	cfg.Sched.MaxModelLen = 512
	cfg.Sched.MaxNumSeqs = 16
	cfg.Sched.MaxNumBatchedTokens = 512
	cfg.KV.NumBlocks, cfg.KV.BlockSize = 256, 16
	if o.numBlocks > 0 {
		cfg.KV.NumBlocks, cfg.KV.BlockSize = o.numBlocks, o.blockSize
	}
	if o.maxModelLen > 0 {
		cfg.Sched.MaxModelLen = o.maxModelLen
	}
	if o.budget > 0 {
		cfg.Sched.MaxNumBatchedTokens = o.budget
	}
	cfg.KV.EnablePrefixCaching = o.prefixCaching
	cfg.Sched.Speculative = o.spec
	cfg.Sched.FastForward = o.fastForward
	r, err := runner.New(s.model, nil, runner.Config{
		NumBlocks: cfg.KV.NumBlocks, BlockSize: cfg.KV.BlockSize,
		MaxNumBatchedTokens: cfg.Sched.MaxNumBatchedTokens, MaxNumSeqs: cfg.Sched.MaxNumSeqs,
		EOSTokenID: s.tok.EOS(),
	})
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{inner: r, open: make(chan struct{}), step: make(chan struct{})}
	c, err := core.New(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	return c, g
}

// TestStoriesBothFrontEnds runs the case-6 workload on the real model
// through both front ends: greedy outputs equal llama2.c's golden ids, and
// a fresh Prometheus registry holds vLLM's expected counts.
func TestStoriesBothFrontEnds(t *testing.T) {
	s := loadStories(t)
	if got := s.tok.Encode("Once upon a time", true); !slices.Equal(got, s.prompt) {
		t.Fatalf("tokenizer gives %v, golden prompt is %v", got, s.prompt)
	}
	const n, m = 6, 48
	cases := []struct {
		name string
		opts coreOpts
	}{
		{"prefix caching", coreOpts{prefixCaching: true}},
		{"tiny KV cache", coreOpts{numBlocks: 12, blockSize: 8, maxModelLen: 96}},
	}
	for _, c := range cases {
		for _, fe := range frontEnds {
			t.Run(c.name+"/"+fe.name, func(t *testing.T) {
				reqs := make([]Request, n)
				for i := range reqs {
					params := forced(m)
					reqs[i] = Request{ID: fmt.Sprintf("story-%d", i), Prompt: "Once upon a time", Params: params}
				}
				core, g := s.core(t, c.opts)
				cfg := Config{MaxModelLen: core.Scheduler().Config().MaxModelLen}
				reg, prom := newPrometheus(t, cfg.MaxModelLen)
				rec := newRecorder()
				res := fe.run(t, core, g, s.tok, cfg, reqs, prom, rec)
				want := s.golden[:m]
				wantText := s.tok.Decode(append(slices.Clone(s.prompt), want...), true)[len("Once upon a time"):]
				for id, r := range res {
					if !slices.Equal(r.tokens[0], want) || r.text[0] != wantText {
						t.Errorf("%s:\n got %v %q\nwant %v %q", id, r.tokens[0], r.text[0], want, wantText)
					}
				}
				a := rec.snapshot()
				p := len(s.prompt)
				checkCase6(t, workload{n: n, p: p, m: m, opts: c.opts}, a, res) // a 5-token prompt fills no 16-token block: no hits
				sc := scrapeRegistry(t, reg)
				for _, row := range []struct {
					name      string
					got, want float64
				}{
					{"prompt_tokens_total", sc.get(t, "vllm:prompt_tokens").Value, float64(n * p)},
					{"generation_tokens_total", sc.get(t, "vllm:generation_tokens").Value, float64(n * m)},
					{"request_success_total{length}", sc.get(t, "vllm:request_success", "finished_reason", "length").Value, n},
					{"time_to_first_token_seconds_count", float64(sc.get(t, "vllm:time_to_first_token_seconds").Count), n},
					{"inter_token_latency_seconds_count", float64(sc.get(t, "vllm:inter_token_latency_seconds").Count), float64(n * (m - 1))},
					{"iteration_tokens_total_sum", sc.get(t, "vllm:iteration_tokens_total").Sum, float64(n * (p + m))},
					{"e2e_request_latency_seconds_count", float64(sc.get(t, "vllm:e2e_request_latency_seconds").Count), n},
					{"num_requests_running", sc.get(t, "vllm:num_requests_running").Value, 0},
					{"kv_cache_usage_perc", sc.get(t, "vllm:kv_cache_usage_perc").Value, 0},
				} {
					if row.got != row.want {
						t.Errorf("%s = %g, want %g", row.name, row.got, row.want)
					}
				}
				t.Logf("%d steps recorded, %d preemptions, %d cached prompt tokens", a.Records, a.Preemptions, a.PromptCached)
			})
		}
	}
}

// TestStoriesStopString: "Lily" first appears in the golden story after
// ", there was a little girl named ".
func TestStoriesStopString(t *testing.T) {
	s := loadStories(t)
	for _, fe := range frontEnds {
		t.Run(fe.name, func(t *testing.T) {
			params := sampling.Default()
			params.Temperature = 0
			params.MaxTokens = 64
			params.Stop = []string{"Lily"}
			core, g := s.core(t, coreOpts{})
			rec := newRecorder()
			res := fe.run(t, core, g, s.tok, Config{}, []Request{{ID: "lily", Prompt: "Once upon a time", Params: params}}, rec)["lily"]
			if want := ", there was a little girl named "; res.text[0] != want || res.finish[0] != stats.FinishStop || res.stop[0] != "Lily" {
				t.Errorf("got %q %v %v, want %q stop Lily", res.text[0], res.finish[0], res.stop[0], want)
			}
			a := rec.snapshot()
			if a.Finished[stats.FinishStop] != 1 || sumReasons(a.Finished) != 1 || a.Last.NumRunningReqs != 0 || a.Last.KVCacheUsage != 0 {
				t.Errorf("finished %v, last snapshot %+v", a.Finished, a.Last)
			}
		})
	}
}
