package model

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/testmodels"
)

// editGGUF rewrites src into a temporary file after edit changes its
// metadata and tensors, and returns the new path.
func editGGUF(t *testing.T, src string, edit func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "edited.gguf")
	editGGUFTo(t, src, dst, edit)
	return dst
}

// editGGUFTo re-encodes src into dst after edit changes its metadata and
// tensors (in file order).
func editGGUFTo(t *testing.T, src, dst string, edit func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)) {
	t.Helper()
	f, err := gguf.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ReadTensorData(); err != nil {
		t.Fatal(err)
	}
	var kvs []gguf.KV
	for _, k := range f.Keys {
		kvs = append(kvs, gguf.KV{Key: k, Value: f.Metadata[k]})
	}
	var ts []gguf.TensorData
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		d, err := f.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, gguf.TensorData{Name: ti.Name, Dims: ti.Dims, Type: ti.Type, Data: d})
	}
	kvs, ts = edit(kvs, ts)
	var buf bytes.Buffer
	if err := gguf.Encode(&buf, kvs, ts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGGUFNothingSilent: a file whose architecture, metadata or tensors
// the loader does not fully use is refused, naming what it did not use.
func TestGGUFNothingSilent(t *testing.T) {
	dir := testmodels.Dir(t, "synthetic")
	f32Vec := func(name string, n int) gguf.TensorData {
		return gguf.TensorData{Name: name, Dims: []uint64{uint64(n)}, Type: gguf.GGMLTypeF32, Data: make([]byte, 4*n)}
	}
	setKey := func(key string, v any) func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range kvs {
				if kvs[i].Key == key {
					kvs[i].Value = v
					return kvs, ts
				}
			}
			return append(kvs, gguf.KV{Key: key, Value: v}), ts
		}
	}
	addTensor := func(td gguf.TensorData) func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) { return kvs, append(ts, td) }
	}
	dropTensor := func(name string) func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			return kvs, slices.DeleteFunc(ts, func(td gguf.TensorData) bool { return td.Name == name })
		}
	}
	for _, tc := range []struct {
		name, src string
		edit      func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)
		want      string
	}{
		{"unknown architecture", "qwen2/qwen2-Q8_0.gguf", setKey("general.architecture", "qwen9"),
			`"qwen9" is not supported (supported: gemma2, gemma3, llama, mistral, phi3, qwen2, qwen2moe, qwen3, qwen3moe)`},
		{"llama file with an output-projection bias", "llama/llama-Q8_0.gguf", addTensor(f32Vec("blk.1.attn_output.bias", 256)),
			"tensor blk.1.attn_output.bias is not used by architecture llama"},
		{"llama file with q/k norms", "llama/llama-Q8_0.gguf", addTensor(f32Vec("blk.0.attn_k_norm.weight", 64)),
			"tensor blk.0.attn_k_norm.weight is not used"},
		{"a bias of the wrong size", "qwen2/qwen2-Q8_0.gguf", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			kvs, ts = dropTensor("blk.1.attn_v.bias")(kvs, ts)
			return addTensor(f32Vec("blk.1.attn_v.bias", 100))(kvs, ts)
		}, "tensor blk.1.attn_v.bias has dims [100], want 128 values"},
		{"qwen2 with an output bias", "qwen2/qwen2-Q8_0.gguf", addTensor(f32Vec("output.bias", 503)),
			"tensor output.bias is not used"},
		{"unknown rope scaling", "qwen3/qwen3-Q8_0.gguf", setKey("qwen3.rope.scaling.type", "dynamic"),
			`rope scaling type "dynamic" is not supported (none, linear, yarn and longrope are)`},
		{"yarn log multiplier", "qwen3/qwen3-Q8_0.gguf", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			kvs, ts = setKey("qwen3.rope.scaling.type", "yarn")(kvs, ts)
			return setKey("qwen3.rope.scaling.yarn_log_multiplier", float32(0.1))(kvs, ts)
		}, "metadata qwen3.rope.scaling.yarn_log_multiplier not supported"},
		{"yarn beta of linear scaling", "qwen3/qwen3-Q8_0.gguf", setKey("qwen3.rope.scaling.yarn_beta_fast", float32(16)),
			"metadata qwen3.rope.scaling.yarn_beta_fast not supported"},
		{"partial rotary on qwen3", "qwen3/qwen3-Q8_0.gguf", setKey("qwen3.rope.dimension_count", uint32(32)),
			"qwen3.rope.dimension_count = 32 differs from the head dim 64 (not supported for qwen3"},
		{"longrope factors on qwen2", "qwen2/qwen2-Q8_0.gguf", addTensor(f32Vec("rope_factors_long.weight", 32)),
			"tensor rope_factors_long.weight is not used by architecture qwen2"},
		{"yarn with gemma3's local base", "gemma3/gemma3-Q8_0.gguf", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			kvs, ts = setKey("gemma3.rope.scaling.type", "yarn")(kvs, ts)
			return setKey("gemma3.rope.scaling.factor", float32(4))(kvs, ts)
		}, "yarn rope scaling with a local rope base is not supported"},
		{"rope_freqs on phi3", "phi3/phi3-Q8_0.gguf", addTensor(f32Vec("rope_freqs.weight", 32)),
			"tensor rope_freqs.weight is not used by architecture phi3"},
		{"long factors without short ones", "phi3/phi3-Q8_0.gguf", addTensor(f32Vec("rope_factors_long.weight", 32)),
			"rope_factors_long.weight and rope_factors_short.weight come together"},
		{"long factors of the wrong size", "phi3/phi3-Q8_0.gguf", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			return kvs, append(ts, f32Vec("rope_factors_long.weight", 32), f32Vec("rope_factors_short.weight", 24))
		}, "tensor rope_factors_short.weight has dims [24], want 32 values"},
		{"vocab_size disagrees", "llama/llama-Q8_0.gguf", setKey("llama.vocab_size", uint32(500)),
			"llama.vocab_size = 500, token_embd has 503 rows"},
		{"non-causal", "qwen3/qwen3-Q8_0.gguf", setKey("qwen3.attention.causal", false),
			"non-causal attention (qwen3.attention.causal = false) is not supported"},
		{"shared experts", "qwen3moe/qwen3moe-Q8_0.gguf", setKey("qwen3moe.expert_shared_count", uint32(1)),
			"metadata qwen3moe.expert_shared_count not supported"},
		{"qwen3moe without experts", "qwen3moe/qwen3moe-Q8_0.gguf", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			return slices.DeleteFunc(kvs, func(kv gguf.KV) bool { return kv.Key == "qwen3moe.expert_count" }), ts
		}, "qwen3moe.expert_count is missing"},
		{"gemma2 without post norm", "gemma2/gemma2-Q8_0.gguf", dropTensor("blk.0.post_ffw_norm.weight"),
			"missing tensor blk.0.post_ffw_norm.weight"},
		{"phi3 with unfused q", "phi3/phi3-Q8_0.gguf", addTensor(f32Vec("blk.0.attn_q.weight", 256)),
			"tensor blk.0.attn_q.weight is not used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(editGGUF(t, filepath.Join(dir, tc.src), tc.edit), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		name    string
		logits  []float32
		k       int
		renorm  bool
		wantSel []int32
	}{
		{"top 2 of 4", []float32{0.1, 2, -1, 1.5}, 2, true, []int32{1, 3}},
		{"ties go to the lower id", []float32{1, 3, 3, 3}, 2, true, []int32{1, 2}},
		{"top 1", []float32{-5, -4, -3}, 1, true, []int32{2}},
		{"all", []float32{0, 1, 2}, 3, true, []int32{2, 1, 0}},
		{"top 2 of 4, probabilities as they are", []float32{0.1, 2, -1, 1.5}, 2, false, []int32{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := slices.Clone(tc.logits)
			sel, w := make([]int32, tc.k), make([]float32, tc.k)
			route(p, sel, w, tc.renorm)
			if !slices.Equal(sel, tc.wantSel) {
				t.Fatalf("selected %v, want %v", sel, tc.wantSel)
			}
			// Softmax, then renormalization over the chosen: exp(l_e) / Σ exp(l).
			var z float64
			for e, l := range tc.logits {
				if tc.renorm && !slices.Contains(sel, int32(e)) {
					continue
				}
				z += math.Exp(float64(l))
			}
			for k, e := range sel {
				if want := math.Exp(float64(tc.logits[e])) / z; math.Abs(float64(w[k])-want) > 1e-6 {
					t.Errorf("weight of expert %d = %g, want %g", e, w[k], want)
				}
			}
		})
	}
}

// TestNeoxPermutation: rotating NEOX pairs (i, i+hd/2) and then permuting
// equals permuting and then rotating adjacent pairs, which is how the
// loader turns NEOX q and k rows into the forward pass's layout.
func TestNeoxPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// rot < hd: partial rotary, llama.cpp's NEOX with n_dims < head dim
	// (pairs i, i+rot/2; the rest unrotated).
	for _, tc := range []struct{ heads, hd, rot, pos int }{{1, 8, 8, 3}, {2, 64, 64, 17}, {3, 16, 16, 200}, {2, 64, 48, 33}, {1, 16, 4, 9}} {
		half := tc.rot / 2
		x := make([]float32, tc.heads*tc.hd)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		cs, sn := make([]float32, half), make([]float32, half)
		for i := range cs {
			s, c := math.Sincos(float64(tc.pos) / math.Pow(10000, float64(2*i)/float64(tc.rot)))
			cs[i], sn[i] = float32(c), float32(s)
		}
		neox := slices.Clone(x) // llama.cpp's NEOX rotation
		for h := 0; h < tc.heads; h++ {
			for i := 0; i < half; i++ {
				a, b := x[h*tc.hd+i], x[h*tc.hd+i+half]
				neox[h*tc.hd+i], neox[h*tc.hd+i+half] = a*cs[i]-b*sn[i], a*sn[i]+b*cs[i]
			}
		}
		perm := neoxPerm(tc.heads, tc.hd, tc.rot)
		got := permuteVec(x, perm)
		rt := ropeTable{half: half, headDim: tc.hd, cos: cs, sin: sn}
		rt.apply(got, 0, nil)
		if d := maxDiff(got, permuteVec(neox, perm)); d > 1e-6 {
			t.Errorf("heads %d, hd %d, rot %d: max diff %g", tc.heads, tc.hd, tc.rot, d)
		}
	}
}

// TestGGUFHarmlessKeys: keys real files carry that change nothing, or
// agree with the file, load.
func TestGGUFHarmlessKeys(t *testing.T) {
	src := filepath.Join(testmodels.Dir(t, "synthetic"), "llama", "llama-Q8_0.gguf")
	m, err := Load(editGGUF(t, src, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return append(kvs, gguf.KV{Key: "llama.vocab_size", Value: uint32(503)},
			gguf.KV{Key: "llama.tensor_data_layout", Value: "Meta AI original pth"},
			gguf.KV{Key: "llama.attention.causal", Value: true}), ts
	}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.VocabSize != 503 {
		t.Fatalf("vocab %d, want 503", m.Config.VocabSize)
	}
}

// TestGGUFRopeScaling: llama.cpp's reading of the scaling keys (type
// "linear" when absent, the factor's two names, 1 meaning none).
func TestGGUFRopeScaling(t *testing.T) {
	src := filepath.Join(testmodels.Dir(t, "synthetic"), "qwen3", "qwen3-Q8_0.gguf")
	for _, tc := range []struct {
		name string
		kvs  map[string]any
		want float64
	}{
		{"none", nil, 0},
		{"factor alone is linear", map[string]any{"qwen3.rope.scaling.factor": float32(4)}, 4},
		{"old key", map[string]any{"qwen3.rope.scale_linear": float32(2)}, 2},
		{"linear 1", map[string]any{"qwen3.rope.scaling.type": "linear", "qwen3.rope.scaling.factor": float32(1)}, 0},
		{"type none", map[string]any{"qwen3.rope.scaling.type": "none", "qwen3.rope.scaling.factor": float32(8)}, 0},
		{"linear 8 with the training context", map[string]any{"qwen3.rope.scaling.type": "linear",
			"qwen3.rope.scaling.factor": float32(8), "qwen3.rope.scaling.original_context_length": uint32(256)}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(editGGUF(t, src, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
				for _, k := range sortedKeys(tc.kvs) {
					kvs = append(kvs, gguf.KV{Key: k, Value: tc.kvs[k]})
				}
				return kvs, ts
			}), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Config.RopeLinear != tc.want {
				t.Fatalf("RopeLinear = %g, want %g", m.Config.RopeLinear, tc.want)
			}
			// Linear scaling divides every frequency.
			base := m.Config
			base.RopeLinear = 0
			f0, f := ropeFreqs(&base, nil), ropeFreqs(&m.Config, nil)
			div := max(tc.want, 1)
			for i := range f {
				if math.Abs(f[i]*div-f0[i]) > 1e-12*f0[i] {
					t.Fatalf("freq %d = %g, want %g/%g", i, f[i], f0[i], div)
				}
			}
		})
	}
}

// TestGGUFAttentionLayouts: as in llama.cpp, any architecture's q/k/v come
// fused (attn_qkv) or apart, each bias optional (absent = zero) and
// applied when present.
func TestGGUFAttentionLayouts(t *testing.T) {
	dir := testmodels.Dir(t, "synthetic")
	logits := func(path string) []float32 {
		m, err := Load(path, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return logitsOf(t, m, randTokens(24, m.Config.VocabSize, 3))
	}
	split := func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		var out []gguf.TensorData
		for _, td := range ts {
			p, ok := strings.CutSuffix(td.Name, "attn_qkv.weight")
			if !ok {
				out = append(out, td)
				continue
			}
			rb := len(td.Data) / int(td.Dims[1]) // Q8_0 rows of 256: whole blocks
			for _, part := range []struct {
				name   string
				r0, r1 int
			}{{"attn_q", 0, 256}, {"attn_k", 256, 384}, {"attn_v", 384, 512}} {
				out = append(out, gguf.TensorData{Name: p + part.name + ".weight", Dims: []uint64{td.Dims[0], uint64(part.r1 - part.r0)},
					Type: td.Type, Data: td.Data[part.r0*rb : part.r1*rb]})
			}
		}
		return kvs, out
	}
	zeroBias := func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		for i := range ts {
			if ts[i].Name == "blk.1.attn_v.bias" {
				ts[i].Data = make([]byte, len(ts[i].Data))
			}
		}
		return kvs, ts
	}
	withoutBias := func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return kvs, slices.DeleteFunc(ts, func(td gguf.TensorData) bool { return td.Name == "blk.1.attn_v.bias" })
	}
	addBias := func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		b := make([]float32, 256)
		for i := range b {
			b[i] = 0.5
		}
		return kvs, append(ts, f32Tensor("blk.0.attn_q.bias", []uint64{256}, b))
	}
	phi3 := filepath.Join(dir, "phi3", "phi3-Q8_0.gguf")
	if d := maxDiff(logits(editGGUF(t, phi3, split)), logits(phi3)); d != 0 {
		t.Errorf("phi3 with attn_qkv split into attn_q/k/v: logits differ by %g", d)
	}
	qwen2 := filepath.Join(dir, "qwen2", "qwen2-Q8_0.gguf")
	if d := maxDiff(logits(editGGUF(t, qwen2, withoutBias)), logits(editGGUF(t, qwen2, zeroBias))); d != 0 {
		t.Errorf("qwen2 without a v bias differs by %g from a zero v bias", d)
	}
	llama := filepath.Join(dir, "llama", "llama-Q8_0.gguf")
	if d := maxDiff(logits(editGGUF(t, llama, addBias)), logits(llama)); d < 1e-3 {
		t.Errorf("a q bias in a llama file changed the logits by only %g: not applied", d)
	}
}
