package model

import (
	"math"
	"path/filepath"
	"testing"

	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// TestKVDTypeSyntheticGoldens runs the synthetic conformance models with
// F16 and Q8_0 KV caches and counts, over the three prompts, how many of
// llama.cpp's greedy ids (made with a float32 KV cache) govllm still
// reproduces before its first differing id, and the first step's largest
// logprob difference from govllm's float32 cache. The counts are held to
// the measured ones as floors (a drop is an accuracy regression).
func TestKVDTypeSyntheticGoldens(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every synthetic model")
	}
	pool := tensor.NewPool(2)
	defer pool.Close()
	for _, sm := range testmodels.SyntheticModels(t) {
		key := sm.Arch + "/" + sm.Quant
		if known, ok := syntheticSupported[key]; !ok || known != "" {
			continue
		}
		m, err := Load(sm.Path, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, codec := range []*tensor.KVCodec{tensor.KVF16, tensor.KVQ8_0} {
			ids, total, dlp := 0, 0, 0.0
			for i := range sm.Cases {
				c := &sm.Cases[i]
				ref, _, err := greedyRunKV(m, pool, tensor.KVF32, c.PromptIDs, 1)
				if err != nil {
					t.Fatal(err)
				}
				first, gen, err := greedyRunKV(m, pool, codec, c.PromptIDs, len(c.GreedyIDs))
				if err != nil {
					t.Fatal(err)
				}
				total += len(c.GreedyIDs)
				for j := 0; j < len(gen) && gen[j] == c.GreedyIDs[j]; j++ {
					ids++
				}
				dlp = max(dlp, maxLogprobDiff(first, ref))
			}
			floor := kvGoldenFloors[key+"/"+codec.Name]
			t.Logf("%s KV %s: %d/%d golden ids, first-step max |Δ logprob| vs float32 KV %.4g", key, codec.Name, ids, total, dlp)
			if ids < floor && tensor.Level() == "avx512" {
				t.Errorf("%s KV %s: %d golden ids match, fewer than the measured %d", key, codec.Name, ids, floor)
			}
		}
	}
}

// maxLogprobDiff is max |log_softmax(a) − log_softmax(b)|.
func maxLogprobDiff(a, b []float32) float64 {
	la, lb := logSoftmax64(a), logSoftmax64(b)
	d := 0.0
	for i := range la {
		d = max(d, math.Abs(la[i]-lb[i]))
	}
	return d
}

// logSoftmax64 is log_softmax in float64.
func logSoftmax64(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, float64(v))
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) - m - math.Log(s)
	}
	return out
}

// TestKVDTypeAccuracyStories feeds a prompt of stories260K (trained
// weights; heads of 8, so F16 only: Q8_0 needs heads of 32) with a float32
// and an F16 KV cache, logits at every position, and bounds the largest
// logprob difference over all positions and the vocabulary.
func TestKVDTypeAccuracyStories(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	m, err := Load(filepath.Join(dir, "stories260K.gguf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Config.CheckKVCacheDType(tensor.KVQ8_0); err == nil {
		t.Fatalf("q8_0 accepted for heads of %d", m.Config.HeadDim)
	}
	pool := tensor.NewPool(2)
	defer pool.Close()
	prompt := randTokens(200, m.Config.VocabSize, 3)
	ref := promptLogits(t, m, pool, tensor.KVF32, prompt)
	got := promptLogits(t, m, pool, tensor.KVF16, prompt)
	v := m.Config.VocabSize
	d := 0.0
	for p := range prompt {
		d = max(d, maxLogprobDiff(got[p*v:(p+1)*v], ref[p*v:(p+1)*v]))
	}
	t.Logf("stories260K, %d positions: max |Δ logprob| fp16 vs float32 KV = %.4g", len(prompt), d)
	if d > 0.05 {
		t.Errorf("fp16 KV: max |Δ logprob| %g > 0.05", d)
	}
}

// promptLogits runs prompt in chunks of 64 tokens (so later chunks read
// earlier ones from the cache) with logits at every position.
func promptLogits(t *testing.T, m *Model, pool *tensor.Pool, codec *tensor.KVCodec, prompt []int32) []float32 {
	const bs, chunk = 16, 64
	nb := (len(prompt) + bs - 1) / bs
	kv := NewKVCacheOf(codec, m.Config, nb, bs)
	ws := m.NewWorkspace(chunk)
	v := m.Config.VocabSize
	out := make([]float32, len(prompt)*v)
	for p := 0; p < len(prompt); p += chunk {
		n := min(chunk, len(prompt)-p)
		seq := Seq{Start: p, NumTokens: n, BlockTable: blockTable(nb, nb), NeedLogits: true, NumLogits: n}
		if err := m.Forward(ws, pool, &Batch{Tokens: prompt[p : p+n], Seqs: []Seq{seq}}, kv, out[p*v:(p+n)*v]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// kvGoldenFloors are the golden ids (of 96) TestKVDTypeSyntheticGoldens
// measured per file and KV format ("arch/quant/format"), at the avx512
// level (other levels sum in other orders: not checked there). With a
// float32 KV cache every file matches its goldens (TestSyntheticGoldens). The
// quantized files amplify the KV rounding through the next matmul's
// activation quantization (see syntheticLogprobKnown): their first-step
// logprobs move by 0.12–0.44 and greedy runs part from the goldens at
// their near ties; the F32 file (qwen2/F32) moves by 0.004 (fp16) and
// 0.07 (q8_0) and keeps all 96 ids.
var kvGoldenFloors = map[string]int{
	"gemma2/Q4_K_M/fp16": 96, "gemma2/Q4_K_M/q8_0": 64, "gemma2/Q8_0/fp16": 66, "gemma2/Q8_0/q8_0": 77,
	"gemma3/Q4_K_M/fp16": 50, "gemma3/Q4_K_M/q8_0": 23, "gemma3/Q5_K_M/fp16": 41, "gemma3/Q5_K_M/q8_0": 10,
	"gemma3/Q8_0/fp16": 52, "gemma3/Q8_0/q8_0": 49, "llama/Q3_K_M/fp16": 48, "llama/Q3_K_M/q8_0": 43,
	"llama/Q4_0/fp16": 57, "llama/Q4_0/q8_0": 36, "llama/Q4_K_M/fp16": 42, "llama/Q4_K_M/q8_0": 56,
	"llama/Q5_K_M/fp16": 45, "llama/Q5_K_M/q8_0": 82, "llama/Q6_K/fp16": 67, "llama/Q6_K/q8_0": 32,
	"llama/Q8_0/fp16": 63, "llama/Q8_0/q8_0": 35, "phi3/Q4_K_M/fp16": 49, "phi3/Q4_K_M/q8_0": 37,
	"phi3/Q8_0/fp16": 59, "phi3/Q8_0/q8_0": 65, "qwen2/F32/fp16": 96, "qwen2/F32/q8_0": 96,
	"qwen2/Q4_K_M/fp16": 96, "qwen2/Q4_K_M/q8_0": 35, "qwen2/Q6_K/fp16": 65, "qwen2/Q6_K/q8_0": 42,
	"qwen2/Q8_0/fp16": 67, "qwen2/Q8_0/q8_0": 48, "qwen3/Q4_K_M/fp16": 88, "qwen3/Q4_K_M/q8_0": 88,
	"qwen3/Q8_0/fp16": 90, "qwen3/Q8_0/q8_0": 52, "qwen3moe/Q4_K_M/fp16": 86, "qwen3moe/Q4_K_M/q8_0": 25,
	"qwen3moe/Q8_0/fp16": 31, "qwen3moe/Q8_0/q8_0": 34,
}
