package model

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/testmodels"
)

// ggufToHF maps GGUF tensor names to Hugging Face ones; a family's own
// names (first, so they win) come before these.
var ggufToHF = []string{
	"token_embd.weight", "model.embed_tokens.weight", "output_norm.weight", "model.norm.weight",
	"output.weight", "lm_head.weight", "blk.", "model.layers.",
	".attn_q_norm.", ".self_attn.q_norm.", ".attn_k_norm.", ".self_attn.k_norm.",
	".attn_q.", ".self_attn.q_proj.", ".attn_k.", ".self_attn.k_proj.", ".attn_v.", ".self_attn.v_proj.",
	".attn_output.", ".self_attn.o_proj.", ".attn_norm.", ".input_layernorm.",
	".ffn_norm.", ".post_attention_layernorm.", ".ffn_gate.", ".mlp.gate_proj.",
	".ffn_up.", ".mlp.up_proj.", ".ffn_down.", ".mlp.down_proj.",
}

// qwenMoEHF are Qwen-MoE's own HF names ({e}: the expert).
var qwenMoEHF = []string{".ffn_gate_inp.", ".mlp.gate.", ".ffn_gate_exps.", ".mlp.experts.{e}.gate_proj.",
	".ffn_up_exps.", ".mlp.experts.{e}.up_proj.", ".ffn_down_exps.", ".mlp.experts.{e}.down_proj."}

// phi3HF are Phi-3's own HF names.
var phi3HF = []string{".attn_qkv.", ".self_attn.qkv_proj.", ".ffn_up.", ".mlp.gate_up_proj."}

// gemmaHF are Gemma's own HF names.
var gemmaHF = []string{".post_attention_norm.", ".post_attention_layernorm.", ".post_ffw_norm.", ".post_feedforward_layernorm.",
	".ffn_norm.", ".pre_feedforward_layernorm."}

// hfForm is how a family's weights look in HF form: its architecture,
// config.json keys beyond the common ones, its own tensor names (first,
// so they win) and whether its norm weights are w for GGUF's 1 + w.
type hfForm struct {
	arch  string
	extra map[string]any
	names []string
	gemma bool
	// pairsQK: the GGUF q and k rows are in llama.cpp's NORM layout
	// (adjacent pairs, llama's files); HF's rotate_half wants them as
	// llama.cpp's converter found them, which toHF restores.
	pairsQK bool
}

// toHF writes the F32 GGUF file f32 (of configuration c) as config.json +
// model.safetensors in a new directory; it returns the directory and the
// tensors written.
func toHF(t *testing.T, f32 string, c Config, form hfForm) (string, map[string]stTensor) {
	t.Helper()
	f, err := gguf.ReadFile(f32)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ReadTensorData(); err != nil {
		t.Fatal(err)
	}
	names := strings.NewReplacer(append(slices.Clone(form.names), ggufToHF...)...)
	st := map[string]stTensor{}
	for i := range f.Tensors {
		td := &f.Tensors[i]
		data, err := f.TensorData(td)
		if err != nil {
			t.Fatal(err)
		}
		shape := make([]int64, len(td.Dims))
		for j, d := range td.Dims {
			shape[len(td.Dims)-1-j] = int64(d)
		}
		if form.gemma && strings.HasSuffix(td.Name, "norm.weight") {
			data = slices.Clone(data)
			for j := 0; j < len(data); j += 4 {
				binary.LittleEndian.PutUint32(data[j:], math.Float32bits(math.Float32frombits(binary.LittleEndian.Uint32(data[j:]))-1))
			}
		}
		if form.pairsQK && (strings.HasSuffix(td.Name, ".attn_q.weight") || strings.HasSuffix(td.Name, ".attn_k.weight")) {
			data = pairsToRotateHalf(data, int(td.Dims[1]), int(td.Dims[0]), c.HeadDim, c.RotaryDims())
		}
		if len(td.Dims) == 3 { // stacked experts: one HF tensor each
			per := len(data) / int(td.Dims[2])
			for e := range int(td.Dims[2]) {
				name := strings.ReplaceAll(names.Replace(td.Name), "{e}", strconv.Itoa(e))
				st[name] = stTensor{"F32", shape[1:], data[e*per : (e+1)*per]}
			}
			continue
		}
		st[names.Replace(td.Name)] = stTensor{"F32", shape, data}
	}
	cfg := map[string]any{
		"architectures": []string{form.arch}, "hidden_size": c.Dim, "intermediate_size": c.HiddenDim,
		"num_hidden_layers": c.NumLayers, "num_attention_heads": c.NumHeads, "num_key_value_heads": c.NumKVHeads,
		"vocab_size": c.VocabSize, "max_position_embeddings": c.MaxSeqLen, "rms_norm_eps": 1e-6,
		"rope_theta": c.RopeTheta, "tie_word_embeddings": c.TiedEmbeddings, "hidden_act": "silu",
		"sliding_window": 32, "use_sliding_window": false,
	}
	for k, v := range form.extra {
		cfg[k] = v
	}
	hf := t.TempDir()
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(hf, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	writeSafetensors(t, filepath.Join(hf, "model.safetensors"), st)
	return hf, st
}

// pairsToRotateHalf reorders the rows of an F32 q or k matrix (rows ×
// cols) from adjacent RoPE pairs to rotate_half's: the inverse of the
// loader's neoxPerm, whose row r it puts back at perm[r].
func pairsToRotateHalf(data []byte, rows, cols, hd, rot int) []byte {
	perm := neoxPerm(rows/hd, hd, rot)
	out := make([]byte, len(data))
	rb := 4 * cols
	for r, o := range perm {
		copy(out[o*rb:(o+1)*rb], data[r*rb:(r+1)*rb])
	}
	return out
}

// toF32GGUF rewrites the GGUF file src with every tensor dequantized to F32.
func toF32GGUF(t *testing.T, src string) string {
	t.Helper()
	return editGGUF(t, src, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		toF32Tensors(t, ts)
		return kvs, ts
	})
}

// TestHFMatchesGGUF writes a synthetic GGUF model's weights (as F32) both
// as a GGUF file and as config.json + safetensors, and requires the two
// loaders to give identical logits: HF's q/k layout (rotate_half) is
// llama.cpp's NEOX, so both permute the same rows.
func TestHFMatchesGGUF(t *testing.T) {
	dir := testmodels.Dir(t, "synthetic")
	gelu := map[string]any{"hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 64}
	for _, tc := range []struct {
		src  string
		form hfForm
		tol  float64 // 0, or the rounding of (1 + w) − 1 + 1
	}{
		{"qwen2/qwen2-F32.gguf", hfForm{arch: "Qwen2ForCausalLM"}, 0},
		{"qwen3/qwen3-Q8_0.gguf", hfForm{arch: "Qwen3ForCausalLM", extra: map[string]any{"head_dim": 64}}, 0},
		{"phi3/phi3-Q8_0.gguf", hfForm{arch: "Phi3ForCausalLM", extra: map[string]any{"rms_norm_eps": 1e-5}, names: phi3HF}, 0},
		{"gemma2/gemma2-Q8_0.gguf", hfForm{arch: "Gemma2ForCausalLM", extra: with(gelu, map[string]any{"attn_logit_softcapping": 3, "final_logit_softcapping": 6}),
			names: gemmaHF, gemma: true}, 1e-4},
		{"gemma3/gemma3-Q8_0.gguf", hfForm{arch: "Gemma3ForCausalLM", extra: with(gelu, map[string]any{"sliding_window_pattern": 2, "rope_local_base_freq": 1e4,
			"layer_types": []string{"sliding_attention", "full_attention"}}), names: gemmaHF, gemma: true}, 1e-4},
		{"qwen3moe/qwen3moe-Q8_0.gguf", hfForm{arch: "Qwen3MoeForCausalLM", extra: map[string]any{"head_dim": 64, "num_experts": 4,
			"num_experts_per_tok": 2, "moe_intermediate_size": 256, "norm_topk_prob": true}, names: qwenMoEHF}, 0},
	} {
		t.Run(tc.form.arch, func(t *testing.T) {
			f32 := toF32GGUF(t, filepath.Join(dir, tc.src))
			ref, err := Load(f32, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := ref.Config
			hf, st := toHF(t, f32, c, tc.form)
			m, err := Load(hf, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			toks := randTokens(40, c.VocabSize, 9)
			if d := maxDiff(logitsOf(t, m, toks), logitsOf(t, ref, toks)); d > tc.tol {
				t.Fatalf("HF and GGUF logits differ by %g", d)
			}
			// A tensor the HF loader does not use is an error.
			st["model.layers.0.mlp.gate_proj.bias"] = stTensor{"F32", []int64{int64(c.HiddenDim)}, make([]byte, 4*c.HiddenDim)}
			writeSafetensors(t, filepath.Join(hf, "model.safetensors"), st)
			if _, err := Load(hf, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "model.layers.0.mlp.gate_proj.bias is not used") {
				t.Fatalf("err = %v, want the unused bias named", err)
			}
		})
	}
}

// with returns a copy of a with b's entries added.
func with(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// toF32Tensors dequantizes every tensor of ts to F32 in place.
func toF32Tensors(t *testing.T, ts []gguf.TensorData) {
	for i := range ts {
		td := &ts[i]
		v, err := ggmlToF32(&gguf.TensorInfo{Name: td.Name, Dims: td.Dims, Type: td.Type}, td.Data)
		if err != nil {
			t.Fatal(err)
		}
		*td = f32Tensor(td.Name, td.Dims, v)
	}
}

// f32Tensor is an F32 tensor of the values v.
func f32Tensor(name string, dims []uint64, v []float32) gguf.TensorData {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return gguf.TensorData{Name: name, Dims: dims, Type: gguf.GGMLTypeF32, Data: b}
}

// TestMixtralOfIdenticalExperts turns the synthetic llama model into a
// Mixtral-style one (llama architecture with expert_count, ffn_gate_inp
// and stacked *_exps tensors) whose 4 experts are all the dense FFN: the
// renormalized top-2 weights sum to 1, so the logits must equal the dense
// model's whatever the router (random here) chooses.
func TestMixtralOfIdenticalExperts(t *testing.T) {
	src := filepath.Join(testmodels.Dir(t, "synthetic"), "llama", "llama-Q8_0.gguf")
	dense := editGGUF(t, src, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		toF32Tensors(t, ts)
		return kvs, ts
	})
	const experts = 4
	moe := editGGUF(t, dense, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		kvs = append(kvs, gguf.KV{Key: "llama.expert_count", Value: uint32(experts)}, gguf.KV{Key: "llama.expert_used_count", Value: uint32(2)})
		var out []gguf.TensorData
		for _, td := range ts {
			name, ok := strings.CutSuffix(td.Name, ".weight")
			if !ok || !strings.Contains(name, ".ffn_") || strings.HasSuffix(name, "_norm") {
				out = append(out, td)
				continue
			}
			stacked := gguf.TensorData{Name: name + "_exps.weight", Dims: append(slices.Clone(td.Dims), experts), Type: td.Type}
			for range experts {
				stacked.Data = append(stacked.Data, td.Data...)
			}
			out = append(out, stacked)
			if strings.HasSuffix(name, "ffn_gate") {
				router := make([]float32, 256*experts)
				fillUniform(router, 7, uint64(len(out)), 0.3)
				out = append(out, f32Tensor(strings.TrimSuffix(name, "ffn_gate")+"ffn_gate_inp.weight", []uint64{256, experts}, router))
			}
		}
		return kvs, out
	})
	ref, m := mustLoad(t, dense), mustLoad(t, moe)
	if m.Config.NumExperts != experts || len(m.Layers[1].Experts) != experts {
		t.Fatalf("loaded %d experts (layer 1: %d), want %d", m.Config.NumExperts, len(m.Layers[1].Experts), experts)
	}
	toks := randTokens(40, m.Config.VocabSize, 11)
	if d := maxDiff(logitsOf(t, m, toks), logitsOf(t, ref, toks)); d > 1e-4 {
		t.Fatalf("logits differ from the dense model's by %g", d)
	}
}

// TestQwen2MoESharedExpert turns the synthetic qwen2 model (as F32) into a
// qwen2moe one whose routed experts output zero (ffn_down_exps all 0) and
// whose shared expert is the dense FFN with a zero gate (sigmoid(0) = ½):
// the logits must equal those of the dense model with ffn_down halved.
func TestQwen2MoESharedExpert(t *testing.T) {
	src := filepath.Join(testmodels.Dir(t, "synthetic"), "qwen2", "qwen2-F32.gguf")
	half := editGGUF(t, src, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		for i := range ts {
			if strings.HasSuffix(ts[i].Name, "ffn_down.weight") {
				d := slices.Clone(ts[i].Data)
				for j := 0; j < len(d); j += 4 {
					binary.LittleEndian.PutUint32(d[j:], math.Float32bits(0.5*math.Float32frombits(binary.LittleEndian.Uint32(d[j:]))))
				}
				ts[i].Data = d
			}
		}
		return kvs, ts
	})
	const experts = 4
	moe := editGGUF(t, src, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		for i := range kvs {
			if kvs[i].Key == "general.architecture" {
				kvs[i].Value = "qwen2moe"
			}
			kvs[i].Key = strings.Replace(kvs[i].Key, "qwen2.", "qwen2moe.", 1)
		}
		kvs = append(kvs, gguf.KV{Key: "qwen2moe.expert_count", Value: uint32(experts)},
			gguf.KV{Key: "qwen2moe.expert_used_count", Value: uint32(2)},
			gguf.KV{Key: "qwen2moe.expert_feed_forward_length", Value: uint32(512)},
			gguf.KV{Key: "qwen2moe.expert_shared_feed_forward_length", Value: uint32(512)})
		var out []gguf.TensorData
		for _, td := range ts {
			p, kind, ok := strings.Cut(td.Name, ".ffn_")
			if !ok || kind == "norm.weight" {
				out = append(out, td)
				continue
			}
			kind = strings.TrimSuffix(kind, ".weight")
			stacked := gguf.TensorData{Name: p + ".ffn_" + kind + "_exps.weight", Dims: append(slices.Clone(td.Dims), experts), Type: td.Type}
			for range experts {
				if kind == "down" {
					stacked.Data = append(stacked.Data, make([]byte, len(td.Data))...)
				} else {
					stacked.Data = append(stacked.Data, td.Data...)
				}
			}
			td.Name = p + ".ffn_" + kind + "_shexp.weight"
			out = append(out, stacked, td)
			if kind == "gate" {
				router := make([]float32, 256*experts)
				fillUniform(router, 3, uint64(len(out)), 0.3)
				out = append(out, f32Tensor(p+".ffn_gate_inp.weight", []uint64{256, experts}, router),
					f32Tensor(p+".ffn_gate_inp_shexp.weight", []uint64{256}, make([]float32, 256)))
			}
		}
		return kvs, out
	})
	ref, m := mustLoad(t, half), mustLoad(t, moe)
	if c := m.Config; c.SharedExpertDim != 512 || !c.NoExpertRenorm || c.NumExperts != experts {
		t.Fatalf("config %+v: want a 512-wide shared expert, unnormalized weights, %d experts", c, experts)
	}
	toks := randTokens(40, m.Config.VocabSize, 12)
	if d := maxDiff(logitsOf(t, m, toks), logitsOf(t, ref, toks)); d > 1e-4 {
		t.Fatalf("logits differ from the dense model's by %g", d)
	}
}

// mustLoad loads path or fails the test.
func mustLoad(t *testing.T, path string) *Model {
	t.Helper()
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParseHFConfigMoE: the expert fields of Mixtral's and Qwen-MoE's
// config.json.
func TestParseHFConfigMoE(t *testing.T) {
	base := `"hidden_size":256,"intermediate_size":512,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,
		"vocab_size":503,"max_position_embeddings":512,"rms_norm_eps":1e-6,"rope_theta":1e6,`
	for _, tc := range []struct {
		name, json string
		want       Config // the expert fields
		wantErr    string
	}{
		{"mixtral", `{"architectures":["MixtralForCausalLM"],` + base + `"num_local_experts":8,"num_experts_per_tok":2}`,
			Config{NumExperts: 8, NumExpertsUsed: 2, HiddenDim: 512}, ""},
		{"qwen3moe", `{"architectures":["Qwen3MoeForCausalLM"],` + base + `"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":256,"norm_topk_prob":true}`,
			Config{NumExperts: 4, NumExpertsUsed: 2, HiddenDim: 256}, ""},
		{"qwen2moe", `{"architectures":["Qwen2MoeForCausalLM"],` + base + `"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":128,
			"shared_expert_intermediate_size":512,"norm_topk_prob":false}`,
			Config{NumExperts: 4, NumExpertsUsed: 2, HiddenDim: 128, SharedExpertDim: 512, NoExpertRenorm: true}, ""},
		{"dense layers", `{"architectures":["Qwen3MoeForCausalLM"],` + base + `"num_experts":4,"num_experts_per_tok":2,"mlp_only_layers":[0]}`,
			Config{}, "dense layers among the sparse ones"},
		{"qwen3moe without experts", `{"architectures":["Qwen3MoeForCausalLM"],` + base + `"num_experts_per_tok":2}`,
			Config{}, "qwen3moe without num_experts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _, err := parseHFConfigArch("config.json", []byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := Config{NumExperts: c.NumExperts, NumExpertsUsed: c.NumExpertsUsed, HiddenDim: c.HiddenDim,
				SharedExpertDim: c.SharedExpertDim, NoExpertRenorm: c.NoExpertRenorm}
			if got != tc.want {
				t.Fatalf("experts %+v, want %+v", got, tc.want)
			}
		})
	}
}
