package model

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// ropeGoldenCase is one RoPE variant checked against llama.cpp: a
// synthetic model's weights (dequantized to F32) with RoPE metadata set
// and factor tensors added, whose greedy run llama.cpp recorded in
// testdata/rope/<name>.json (testdata/rope/README.md says how). hf, when
// set, is the same model as config.json + safetensors, which must match
// the same golden.
type ropeGoldenCase struct {
	name, src string
	kvs       map[string]any                            // metadata set (the key's arch prefix is the file's)
	factors   map[string][2]float32                     // tensors added: name → the range of its seeded random values
	computed  map[string][]float32                      // tensors added with these values
	hf        map[string]any                            // config.json keys of the HF form (nil: no HF form)
	hfFactors func(map[string][]float32) map[string]any // rope_scaling factors of the HF form
}

// ropeGoldenCases: an original context of 64 (and of 256 for LongRoPE's
// short factors) so that the 200-token prompt runs far past it.
var ropeGoldenCases = []ropeGoldenCase{
	{name: "llama-yarn", src: "llama/llama-Q8_0.gguf",
		kvs: map[string]any{"rope.scaling.type": "yarn", "rope.scaling.factor": float32(4), "rope.scaling.original_context_length": uint32(64)},
		hf:  map[string]any{"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 64}}},
	{name: "qwen2-yarn-beta", src: "qwen2/qwen2-F32.gguf",
		kvs: map[string]any{"rope.scaling.type": "yarn", "rope.scaling.factor": float32(8), "rope.scaling.original_context_length": uint32(64),
			"rope.scaling.yarn_beta_fast": float32(16), "rope.scaling.yarn_beta_slow": float32(2)},
		hf: map[string]any{"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": 64,
			"beta_fast": 16, "beta_slow": 2}}},
	{name: "qwen2-linear", src: "qwen2/qwen2-F32.gguf",
		kvs: map[string]any{"rope.scaling.type": "linear", "rope.scaling.factor": float32(4)},
		hf:  map[string]any{"rope_scaling": map[string]any{"type": "linear", "factor": 4}}},
	// Llama 3.1: the rope_freqs.weight llama.cpp's converter writes for
	// rope_scaling llama3 with factor 8, low 1, high 4 and an original
	// context of 64 (base 5e5: frequencies of each kind).
	{name: "llama-llama3", src: "llama/llama-Q8_0.gguf",
		computed: map[string][]float32{"rope_freqs.weight": llama3RopeFreqs(500000, 64, 8, 1, 4, 64)},
		hf: map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
			"original_max_position_embeddings": 64}}},
	{name: "phi3-longrope-long", src: "phi3/phi3-Q8_0.gguf",
		kvs: map[string]any{"rope.scaling.type": "longrope", "rope.scaling.original_context_length": uint32(64),
			"rope.scaling.attn_factor": float32(math.Sqrt(1 + math.Log(8)/math.Log(64)))},
		factors: map[string][2]float32{"rope_factors_long.weight": {1, 16}, "rope_factors_short.weight": {1, 2}},
		hf:      map[string]any{"rms_norm_eps": 1e-5, "original_max_position_embeddings": 64},
		hfFactors: func(f map[string][]float32) map[string]any {
			return map[string]any{"rope_scaling": map[string]any{"type": "longrope",
				"long_factor": f["rope_factors_long.weight"], "short_factor": f["rope_factors_short.weight"]}}
		}},
	{name: "phi3-longrope-short", src: "phi3/phi3-Q8_0.gguf",
		kvs: map[string]any{"rope.scaling.type": "longrope", "rope.scaling.original_context_length": uint32(256), "context_length": uint32(256),
			"rope.scaling.attn_factor": float32(1)},
		factors: map[string][2]float32{"rope_factors_long.weight": {1, 16}, "rope_factors_short.weight": {1, 2}}},
	{name: "phi3-partial-longrope", src: "phi3/phi3-Q8_0.gguf",
		kvs: map[string]any{"rope.dimension_count": uint32(48), "rope.scaling.type": "longrope", "rope.scaling.original_context_length": uint32(64),
			"rope.scaling.attn_factor": float32(math.Sqrt(1 + math.Log(8)/math.Log(64)))},
		factors: map[string][2]float32{"rope_factors_long.weight": {1, 16}, "rope_factors_short.weight": {1, 2}},
		hf:      map[string]any{"rms_norm_eps": 1e-5, "original_max_position_embeddings": 64, "partial_rotary_factor": 0.75},
		hfFactors: func(f map[string][]float32) map[string]any {
			return map[string]any{"rope_scaling": map[string]any{"type": "longrope",
				"long_factor": f["rope_factors_long.weight"], "short_factor": f["rope_factors_short.weight"]}}
		}},
	{name: "gemma2-partial", src: "gemma2/gemma2-Q8_0.gguf", kvs: map[string]any{"rope.dimension_count": uint32(32)}},
	// Dynamic NTK (vLLM's; llama.cpp has none): the golden is llama.cpp's
	// run with the base vLLM's formula gives, 1e6·(4² − 4 + 1)^(64/62);
	// the HF form says rope_scaling dynamic, factor 4.
	{name: "qwen2-dynamic", src: "qwen2/qwen2-F32.gguf",
		kvs: map[string]any{"rope.freq_base": float32(1e6 * math.Pow(13, 64.0/62))},
		hf:  map[string]any{"rope_theta": 1e6, "rope_scaling": map[string]any{"rope_type": "dynamic", "factor": 4}}},
}

// ropeGGUF writes tc's model into dir as <name>.gguf and returns its path
// and the factor tensors' values.
func ropeGGUF(t *testing.T, tc *ropeGoldenCase, dir string) (string, map[string][]float32) {
	t.Helper()
	src := filepath.Join(testmodels.Dir(t, "synthetic"), tc.src)
	arch := strings.SplitN(tc.src, "/", 2)[0]
	values := map[string][]float32{}
	dst := filepath.Join(dir, tc.name+".gguf")
	editGGUFTo(t, src, dst, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		toF32Tensors(t, ts)
		for _, k := range sortedKeys(tc.kvs) {
			kvs = setKV(kvs, arch+"."+k, tc.kvs[k])
		}
		rng := rand.New(rand.NewPCG(19, 2026))
		for _, name := range sortedKeys(tc.factors) {
			n := 32
			if v, ok := tc.kvs["rope.dimension_count"]; ok {
				n = int(v.(uint32)) / 2
			}
			lo, hi := tc.factors[name][0], tc.factors[name][1]
			v := make([]float32, n)
			for i := range v {
				v[i] = lo + (hi-lo)*float32(i)/float32(n-1)*rng.Float32() // rising on average, like real factors
			}
			values[name] = v
			ts = append(ts, f32Tensor(name, []uint64{uint64(n)}, v))
		}
		for _, name := range sortedKeys(tc.computed) {
			ts = append(ts, f32Tensor(name, []uint64{uint64(len(tc.computed[name]))}, tc.computed[name]))
		}
		return kvs, ts
	})
	return dst, values
}

// llama3RopeFreqs is rope_freqs.weight as llama.cpp's converter
// (conversion/llama.py, generate_extra_tensors) computes it from HF's
// llama3 rope_scaling, in its float32 tensor arithmetic.
func llama3RopeFreqs(base float64, dim int, factor, low, high, orig float32) []float32 {
	lowWavelen, highWavelen := orig/low, orig/high
	var out []float32
	for i := 0; i < dim; i += 2 {
		freq := 1 / float32(math.Pow(base, float64(float32(i)/float32(dim))))
		wavelen := float32(2*math.Pi) / freq
		switch {
		case wavelen < highWavelen:
			out = append(out, 1)
		case wavelen > lowWavelen:
			out = append(out, factor)
		default:
			smooth := (orig/wavelen - low) / (high - low)
			out = append(out, 1/((1-smooth)/factor+smooth))
		}
	}
	return out
}

// setKV sets key to v in kvs, replacing or appending.
func setKV(kvs []gguf.KV, key string, v any) []gguf.KV {
	for i := range kvs {
		if kvs[i].Key == key {
			kvs[i].Value = v
			return kvs
		}
	}
	return append(kvs, gguf.KV{Key: key, Value: v})
}

// TestRopeGoldens runs each RoPE variant greedily against llama.cpp's
// golden, within the synthetic README's F32 tolerance, from the GGUF file
// and, where the case has one, from its HF form. With
// GOVLLM_ROPE_GGUF_DIR set it writes the GGUF files and the prompts there
// instead, for regenerating the goldens (testdata/rope/README.md).
func TestRopeGoldens(t *testing.T) {
	out := os.Getenv("GOVLLM_ROPE_GGUF_DIR")
	pool := tensor.NewPool(2)
	defer pool.Close()
	for i := range ropeGoldenCases {
		tc := &ropeGoldenCases[i]
		t.Run(tc.name, func(t *testing.T) {
			if out != "" {
				ropeGGUF(t, tc, out)
				prompts := filepath.Join(filepath.Dir(filepath.Join(testmodels.Dir(t, "synthetic"), tc.src)), "prompts.txt")
				b, err := os.ReadFile(prompts)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, tc.name+".prompts"), b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var cases []testmodels.SyntheticCase
			b, err := os.ReadFile(filepath.Join("testdata", "rope", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &cases); err != nil {
				t.Fatal(err)
			}
			path, values := ropeGGUF(t, tc, t.TempDir())
			m := mustLoad(t, path)
			checkRopeGolden(t, m, pool, cases)
			// The golden must tell the variant from plain RoPE: the
			// unedited weights miss it.
			plain := mustLoad(t, toF32GGUF(t, filepath.Join(testmodels.Dir(t, "synthetic"), tc.src)))
			if ropeGoldenMisses(plain, pool, cases) == "" {
				t.Fatalf("the model without %s's RoPE settings matches its golden too: the case checks nothing", tc.name)
			}
			if tc.hf == nil {
				return
			}
			extra := with(tc.hf, nil)
			if tc.hfFactors != nil {
				extra = with(extra, tc.hfFactors(values))
			}
			form := hfForms[strings.SplitN(tc.src, "/", 2)[0]]
			form.extra = with(form.extra, extra)
			hf, _ := toHF(t, toF32GGUF(t, filepath.Join(testmodels.Dir(t, "synthetic"), tc.src)), m.Config, form)
			t.Run("hf", func(t *testing.T) { checkRopeGolden(t, mustLoad(t, hf), pool, cases) })
		})
	}
}

// hfForms are the HF forms of the synthetic families the RoPE cases use.
var hfForms = map[string]hfForm{
	"llama": {arch: "LlamaForCausalLM", extra: map[string]any{"rms_norm_eps": 1e-5, "sliding_window": nil}, pairsQK: true},
	"qwen2": {arch: "Qwen2ForCausalLM"},
	"phi3":  {arch: "Phi3ForCausalLM", names: phi3HF},
}

// checkRopeGolden runs every prompt of a golden greedily on m.
func checkRopeGolden(t *testing.T, m *Model, pool *tensor.Pool, cases []testmodels.SyntheticCase) {
	t.Helper()
	if len(cases) == 0 {
		t.Fatal("empty golden")
	}
	if msg := ropeGoldenMisses(m, pool, cases); msg != "" {
		t.Error(msg)
	}
}

// ropeGoldenMisses returns how m's greedy runs miss the golden's (within
// the synthetic README's F32 tolerance), "" when they match.
func ropeGoldenMisses(m *Model, pool *tensor.Pool, cases []testmodels.SyntheticCase) string {
	var msgs []string
	for i := range cases {
		c := &cases[i]
		first, gen, err := greedyRun(m, pool, c.PromptIDs, len(c.GreedyIDs))
		if err != nil {
			return err.Error()
		}
		if msg := testmodels.CheckSynthetic(c, testmodels.SyntheticTolerance("F32"), first, gen); msg != "" {
			msgs = append(msgs, fmt.Sprintf("prompt %d (%d ids): %s", i, len(c.PromptIDs), msg))
		}
	}
	return strings.Join(msgs, "\n")
}
