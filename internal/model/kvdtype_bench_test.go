package model

import (
	"fmt"
	"testing"

	"govllm/internal/cputime"
	"govllm/internal/tensor"
)

// BenchmarkKVDecode: decode steps of seqs sequences at a long context,
// the KV cache in each format (the stories110m shape, F32 weights, two
// threads). -count repeats each sub-benchmark back to back, so compare
// formats interleaved in time by repeating whole runs:
//
//	for i in 1 2 3; do go test -run X -bench KVDecode -benchtime 10x ./internal/model/; done
//
// tok/s is the step's tokens per wall second, tok/cpu-s per CPU second.
func BenchmarkKVDecode(b *testing.B) {
	bm := namedBenchModel("stories110m-f32", "stories110m", tensor.F32)
	for _, c := range []struct{ seqs, ctx int }{{1, 1024}, {1, 2048}, {4, 1024}} {
		for _, codec := range []*tensor.KVCodec{tensor.KVF32, tensor.KVF16, tensor.KVQ8_0} {
			b.Run(fmt.Sprintf("seqs=%d/ctx=%d/kv=%s", c.seqs, c.ctx, codec.Name), func(b *testing.B) {
				m := bm.get(b)
				pool := tensor.NewPool(2)
				defer pool.Close()
				d := newDecodeStepKV(m, codec, c.seqs, c.ctx)
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
				reportSpeed(b, c.seqs*b.N, cputime.Process()-cpu0)
			})
		}
	}
}
