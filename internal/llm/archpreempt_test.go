package llm

import (
	"fmt"
	"slices"
	"testing"

	"govllm/internal/model"
	"govllm/internal/testmodels"
	"govllm/internal/tokenizer"
)

// TestPreemptionEveryArchitecture runs, for each architecture of the
// synthetic llama.cpp models (Q8_0), eight greedy requests with prompts of
// 8 to 36 tokens through the async engine on the CPU runner with a KV
// cache too small for them, and checks that requests were preempted and
// that every output equals the run with ample KV: recompute after
// preemption is invisible on every family (sliding windows, soft-caps,
// q/k norms, experts).
func TestPreemptionEveryArchitecture(t *testing.T) {
	for _, sm := range testmodels.SyntheticModels(t) {
		if sm.Quant != "Q8_0" {
			continue
		}
		t.Run(sm.Arch, func(t *testing.T) {
			m, err := model.Load(sm.Path, model.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.Load(sm.Path, tokenizer.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := &stories{model: m, tok: tok}
			reqs := func() []Request {
				out := make([]Request, 8)
				for i := range out {
					p := make([]int32, 8+4*i)
					for j := range p {
						p[j] = int32((i*131 + j*17) % m.Config.VocabSize)
					}
					out[i] = Request{ID: fmt.Sprintf("r%d", i), PromptTokenIDs: p, Params: forced(24)}
				}
				return out
			}
			c, g := s.core(t, coreOpts{})
			want := runSync(t, c, g, tok, Config{MaxModelLen: 512}, reqs())
			tiny := coreOpts{numBlocks: 14, blockSize: 8, maxModelLen: 64}
			c, g = s.core(t, tiny)
			rec := newRecorder()
			got := runAsync(t, c, g, tok, Config{MaxModelLen: 64}, reqs(), rec)
			if a := rec.snapshot(); a.Preemptions == 0 {
				t.Fatalf("no preemption (max running %d)", a.MaxRunning)
			}
			for id, w := range want {
				if !slices.Equal(w.tokens[0], got[id].tokens[0]) {
					t.Errorf("%s: %v after preemption, %v with ample KV", id, got[id].tokens[0], w.tokens[0])
				}
			}
		})
	}
}
