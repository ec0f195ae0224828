package model

import (
	"fmt"
	"testing"

	"govllm/internal/cputime"
	"govllm/internal/tensor"
)

// verifyBenchModels are the shapes of BenchmarkVerifyStep.
var verifyBenchModels = []struct {
	name string
	bm   *benchModel
}{
	{"stories110m-q8_0", namedBenchModel("stories110m-q8_0", "stories110m", tensor.Q8_0)},
	{"tinyllama-1.1b-q4_0", namedBenchModel("tinyllama-1.1b-q4_0", "tinyllama-1.1b", tensor.Q4_0)},
	{"tinyllama-1.1b-q8_0", namedBenchModel("tinyllama-1.1b-q8_0", "tinyllama-1.1b", tensor.Q8_0)},
}

// BenchmarkVerifyStep: one sequence's decode step at context 256 feeding
// n tokens with logits for each (a speculative step verifying n-1
// drafts), two threads. What speculative decoding buys per accepted draft
// is the ratio of the n = 1 step's time to the n-token step's: a step
// bound by reading the weights costs about the same for a few tokens.
func BenchmarkVerifyStep(b *testing.B) {
	const ctx = 256
	for _, bmod := range verifyBenchModels {
		for _, n := range []int{1, 2, 3, 5, 9} {
			b.Run(fmt.Sprintf("%s/n=%d", bmod.name, n), func(b *testing.B) {
				m := bmod.bm.get(b)
				pool := tensor.NewPool(2)
				defer pool.Close()
				d := newDecodeStep(m, 1, ctx+n)
				d.batch.Tokens = randTokens(n, m.Config.VocabSize, 5)
				d.batch.Seqs[0].NumTokens, d.batch.Seqs[0].Start, d.batch.Seqs[0].NumLogits = n, ctx, n
				d.ws = m.NewWorkspace(n)
				d.logits = make([]float32, n*m.Config.VocabSize)
				if err := m.Forward(d.ws, pool, d.batch, d.kv, d.logits); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				cpu0 := cputime.Process()
				for range b.N {
					if err := m.Forward(d.ws, pool, d.batch, d.kv, d.logits); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/step")
				b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N), "cpu-µs/step")
			})
		}
	}
}
