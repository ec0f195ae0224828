package model

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/safetensors"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// logitsOf runs toks as one prefill and returns the last token's logits.
func logitsOf(t *testing.T, m *Model, toks []int32) []float32 {
	t.Helper()
	kv := NewKVCache(m.Config, 8, 16)
	logits := make([]float32, m.Config.VocabSize)
	b := &Batch{Tokens: toks, Seqs: []Seq{{NumTokens: len(toks), BlockTable: []int32{0, 1, 2, 3, 4, 5, 6, 7}, NeedLogits: true}}}
	if err := m.Forward(m.NewWorkspace(len(toks)), nil, b, kv, logits); err != nil {
		t.Fatal(err)
	}
	return logits
}

// rewriteGGUF re-encodes a GGUF file, converting tensors with conv (which
// returns the new type and data, or ok=false to keep the tensor as is) and
// dropping tensors named in drop.
func rewriteGGUF(t *testing.T, src, dst string, conv func(ti *gguf.TensorInfo, f32 []float32) (gguf.GGMLType, []byte, bool), drop ...string) {
	t.Helper()
	editGGUFTo(t, src, dst, func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		var out []gguf.TensorData
		for _, td := range ts {
			if strings.Contains(strings.Join(drop, ","), td.Name) {
				continue
			}
			ti := &gguf.TensorInfo{Name: td.Name, Dims: td.Dims, Type: td.Type}
			if typ, nd, ok := conv(ti, decodeF32(td.Data)); ok {
				td.Type, td.Data = typ, nd
			}
			out = append(out, td)
		}
		return kvs, out
	})
}

func TestLoadGGUFTypes(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	src := filepath.Join(dir, "stories260K.gguf")
	f32, err := Load(src, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	toks := []int32{1, 403, 407, 261, 378}
	want := logitsOf(t, f32, toks)
	tmp := t.TempDir()

	t.Run("q8_0 file equals quantize at load", func(t *testing.T) {
		p := filepath.Join(tmp, "q8.gguf")
		rewriteGGUF(t, src, p, func(ti *gguf.TensorInfo, v []float32) (gguf.GGMLType, []byte, bool) {
			if len(ti.Dims) != 2 || ti.Dims[0]%32 != 0 || ti.Name == "token_embd.weight" {
				return 0, nil, false
			}
			q := make([]byte, len(v)/32*34)
			tensor.QuantizeQ8_0(q, v)
			return gguf.GGMLTypeQ8_0, q, true
		})
		mq, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if mq.Layers[0].Wqkv.Type != tensor.Q8_0 || mq.Output.Type != tensor.Q8_0 || mq.Layers[0].W2.Type != tensor.F32 {
			t.Fatalf("types: wqkv %v output %v w2 %v", mq.Layers[0].Wqkv.Type, mq.Output.Type, mq.Layers[0].W2.Type)
		}
		ml, err := Load(src, LoadOptions{Quantize: "q8_0"})
		if err != nil {
			t.Fatal(err)
		}
		a, b := logitsOf(t, mq, toks), logitsOf(t, ml, toks)
		if d := maxDiff(a, b); d != 0 {
			t.Fatalf("Q8_0 file and quantize-at-load differ by %g", d)
		}
		// Q8_0 also quantizes the activations: close, same greedy choice.
		if d := maxDiff(a, want); d > 0.5 || argmax(a) != argmax(want) {
			t.Fatalf("Q8_0 logits differ from F32 by %g (argmax %d vs %d)", d, argmax(a), argmax(want))
		}
	})
	t.Run("q8_0 embeddings", func(t *testing.T) {
		p := filepath.Join(tmp, "q8emb.gguf")
		rewriteGGUF(t, src, p, func(ti *gguf.TensorInfo, v []float32) (gguf.GGMLType, []byte, bool) {
			if ti.Name != "token_embd.weight" {
				return 0, nil, false
			}
			q := make([]byte, len(v)/32*34)
			tensor.QuantizeQ8_0(q, v)
			return gguf.GGMLTypeQ8_0, q, true
		})
		m, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(logitsOf(t, m, toks), want); d > 0.1 {
			t.Fatalf("logits differ from F32 by %g", d)
		}
	})
	for _, tc := range []struct {
		name string
		typ  gguf.GGMLType
		enc  func(float32) uint16
		tol  float64
	}{
		{"f16", gguf.GGMLTypeF16, tensor.F32ToF16, 0.02},
		{"bf16", gguf.GGMLTypeBF16, func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(tmp, tc.name+".gguf")
			rewriteGGUF(t, src, p, func(ti *gguf.TensorInfo, v []float32) (gguf.GGMLType, []byte, bool) {
				b := make([]byte, 2*len(v))
				for i, x := range v {
					binary.LittleEndian.PutUint16(b[2*i:], tc.enc(x))
				}
				return tc.typ, b, true
			})
			m, err := Load(p, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(logitsOf(t, m, toks), want); d > tc.tol {
				t.Fatalf("logits differ from F32 by %g", d)
			}
		})
	}
	t.Run("tied when output.weight is absent", func(t *testing.T) {
		p := filepath.Join(tmp, "tied.gguf")
		rewriteGGUF(t, src, p, func(*gguf.TensorInfo, []float32) (gguf.GGMLType, []byte, bool) { return 0, nil, false }, "output.weight")
		m, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Config.TiedEmbeddings || maxDiff(logitsOf(t, m, toks), want) != 0 {
			t.Fatal("tied model differs")
		}
	})
	t.Run("missing tensor", func(t *testing.T) {
		p := filepath.Join(tmp, "missing.gguf")
		rewriteGGUF(t, src, p, func(*gguf.TensorInfo, []float32) (gguf.GGMLType, []byte, bool) { return 0, nil, false }, "blk.3.ffn_up.weight")
		if _, err := Load(p, LoadOptions{}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "blk.3.ffn_up.weight") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad quantization option", func(t *testing.T) {
		if _, err := Load(src, LoadOptions{Quantize: "q3"}); err == nil {
			t.Fatal("want error")
		}
	})
}

// writeSafetensors writes tensors (name → dtype, shape, bytes) as one file.
func writeSafetensors(t *testing.T, path string, ts map[string]stTensor) {
	t.Helper()
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, n := range names {
		s := ts[n]
		hdr[n] = map[string]any{"dtype": s.dtype, "shape": s.shape, "data_offsets": []int{len(data), len(data) + len(s.data)}}
		data = append(data, s.data...)
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

type stTensor struct {
	dtype string
	shape []int64
	data  []byte
}

func TestLoadHFVariants(t *testing.T) {
	hf := testmodels.Dir(t, "stories260K-hf")
	ref, err := Load(hf, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	toks := []int32{1, 403, 407, 261, 378}
	want := logitsOf(t, ref, toks)
	cfgJSON, err := os.ReadFile(filepath.Join(hf, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.ReadFile(filepath.Join(hf, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReadData(); err != nil {
		t.Fatal(err)
	}
	all := map[string]stTensor{}
	for _, n := range st.Names {
		ti := st.Tensor(n)
		d, _ := st.TensorData(ti)
		all[n] = stTensor{string(ti.DType), ti.Shape, d}
	}

	t.Run("sharded", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "config.json"), cfgJSON, 0o644)
		shards := [2]map[string]stTensor{{}, {}}
		wm := map[string]string{}
		for n, s := range all {
			i := 0
			if strings.Contains(n, "layers.3") || strings.Contains(n, "layers.4") || n == "model.norm.weight" {
				i = 1
			}
			shards[i][n] = s
			wm[n] = fmt.Sprintf("model-%05d-of-00002.safetensors", i+1)
		}
		for i := range shards {
			writeSafetensors(t, filepath.Join(dir, fmt.Sprintf("model-%05d-of-00002.safetensors", i+1)), shards[i])
		}
		idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": wm})
		os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
		m, err := Load(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(logitsOf(t, m, toks), want); d != 0 {
			t.Fatalf("sharded model differs by %g", d)
		}
	})
	t.Run("bf16 untied", func(t *testing.T) {
		dir := t.TempDir()
		var c map[string]any
		json.Unmarshal(cfgJSON, &c)
		c["tie_word_embeddings"] = false
		c["torch_dtype"] = "bfloat16"
		b, _ := json.Marshal(c)
		os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
		conv := map[string]stTensor{}
		for n, s := range all {
			v := decodeF32(s.data)
			d := make([]byte, 2*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint16(d[2*i:], uint16(math.Float32bits(x)>>16))
			}
			conv[n] = stTensor{"BF16", s.shape, d}
		}
		conv["lm_head.weight"] = conv["model.embed_tokens.weight"]
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), conv)
		m, err := Load(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Config.TiedEmbeddings {
			t.Fatal("expected untied")
		}
		if d := maxDiff(logitsOf(t, m, toks), want); d > 0.2 {
			t.Fatalf("bf16 model differs by %g", d)
		}
	})
	badCfg := func(edit func(c map[string]any)) []byte {
		var c map[string]any
		json.Unmarshal(cfgJSON, &c)
		edit(c)
		b, _ := json.Marshal(c)
		return b
	}
	for _, tc := range []struct {
		name string
		cfg  []byte
		want error
	}{
		{"not json", []byte("{"), ErrFormat},
		{"other architecture", badCfg(func(c map[string]any) { c["architectures"] = []string{"GPT2LMHeadModel"} }), ErrFormat},
		{"gelu", badCfg(func(c map[string]any) { c["hidden_act"] = "gelu" }), ErrFormat},
		{"heads do not divide", badCfg(func(c map[string]any) { c["num_key_value_heads"] = 3 }), ErrConfig},
		{"zero layers", badCfg(func(c map[string]any) { c["num_hidden_layers"] = 0 }), ErrConfig},
		{"shape mismatch", badCfg(func(c map[string]any) { c["intermediate_size"] = 100 }), ErrFormat},
		{"untied without lm_head", badCfg(func(c map[string]any) { c["tie_word_embeddings"] = false }), ErrFormat},
		{"unknown scaling", badCfg(func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "ntk-by-parts", "factor": 4} }), ErrFormat},
		{"yarn mscale", badCfg(func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": 4, "mscale": 0.7}
		}), ErrFormat},
		{"partial rotary on llama", badCfg(func(c map[string]any) { c["partial_rotary_factor"] = 0.5 }), ErrFormat},
		{"yarn attention_factor", badCfg(func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": 4, "attention_factor": 0.9}
		}), ErrFormat},
		{"dynamic below 1", badCfg(func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "dynamic", "factor": 0.5} }), ErrFormat},
		{"longrope factors of the wrong length", badCfg(func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"type": "longrope", "long_factor": []float64{1, 2}, "short_factor": []float64{1, 2},
				"original_max_position_embeddings": 64}
		}), ErrFormat},
		{"longrope without the original context", badCfg(func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"type": "longrope", "long_factor": []float64{1, 2}, "short_factor": []float64{1, 2}}
		}), ErrFormat},
		{"rope_scaling null loads", badCfg(func(c map[string]any) { c["rope_scaling"] = nil }), nil},
		{"rope_type default loads", badCfg(func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "default"} }), nil},
		{"bad llama3 scaling", badCfg(func(c map[string]any) {
			c["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1, "original_max_position_embeddings": 8192}
		}), ErrConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "config.json"), tc.cfg, 0o644)
			writeSafetensors(t, filepath.Join(dir, "model.safetensors"), all)
			_, err := Load(dir, LoadOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseHFConfigLlama3(t *testing.T) {
	c, err := parseHFConfig("config.json", []byte(`{"architectures":["LlamaForCausalLM"],"hidden_size":2048,"intermediate_size":8192,
		"num_hidden_layers":16,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":64,"vocab_size":128256,
		"max_position_embeddings":131072,"rms_norm_eps":1e-05,"rope_theta":500000.0,"tie_word_embeddings":true,
		"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,"low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Dim: 2048, HiddenDim: 8192, NumLayers: 16, NumHeads: 32, NumKVHeads: 8, HeadDim: 64, VocabSize: 128256,
		MaxSeqLen: 131072, RMSNormEps: 1e-5, RopeTheta: 500000, TiedEmbeddings: true,
		RopeScaling: &RopeScaling{Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 8192}}
	if c.RopeScaling == nil || *c.RopeScaling != *want.RopeScaling {
		t.Fatalf("rope scaling %+v", c.RopeScaling)
	}
	c.RopeScaling, want.RopeScaling = nil, nil
	if c != want {
		t.Fatalf("config %+v, want %+v", c, want)
	}
	// Llama 3.2 frequencies (reference values from the HF implementation's
	// formula): the highest frequencies are unchanged, the lowest divided
	// by the factor, the middle band interpolated.
	c.RopeScaling = &RopeScaling{Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 8192}
	f := ropeFreqs(&c, nil)
	base := func(i int) float64 { return 1 / math.Pow(500000, float64(2*i)/64) }
	if f[0] != base(0) || math.Abs(f[31]-base(31)/32) > 1e-18 {
		t.Fatalf("freqs[0] = %g, freqs[31] = %g", f[0], f[31])
	}
	for i := range f {
		if f[i] > base(i) || f[i] < base(i)/32*(1-1e-12) {
			t.Fatalf("freq %d = %g outside [%g, %g]", i, f[i], base(i)/32, base(i))
		}
	}
}

func TestParseHFConfigSlidingWindow(t *testing.T) {
	c, err := parseHFConfig("config.json", []byte(`{"architectures":["MistralForCausalLM"],"hidden_size":4096,"intermediate_size":14336,
		"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":32000,
		"max_position_embeddings":32768,"rms_norm_eps":1e-05,"rope_theta":10000.0,"sliding_window":4096}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxSeqLen != 32768 || c.SlidingWindow != 4096 || c.SlidingPattern != 0 || !c.IsLocal(31) || c.HeadDim != 128 || c.RMSNormEps != 1e-5 {
		t.Fatalf("config %+v: want the full context with a 4096-token window on every layer", c)
	}
}

func TestLoadLlama2C(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	raw, err := os.ReadFile(filepath.Join(dir, "stories260K.bin"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Load(filepath.Join(dir, "stories260K.bin"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	toks := []int32{1, 403, 407, 261, 378}
	want := logitsOf(t, ref, toks)
	tmp := t.TempDir()

	t.Run("v1 header", func(t *testing.T) {
		// Re-export as version 1: norms first, then the embedding, the same
		// matrices, no freq_cis.
		c := ref.Config
		d, L := c.Dim, c.NumLayers
		w := raw[28:]
		f := func(off, n int) []byte { return w[off*4 : (off+n)*4] }
		v, kvd, h := c.VocabSize, c.KVDim(), c.HiddenDim
		off := 0
		emb := f(off, v*d)
		off += v * d
		rmsAtt := f(off, L*d)
		off += L * d
		mats := f(off, L*(d*d+2*kvd*d+d*d))
		off += L * (d*d + 2*kvd*d + d*d)
		rmsFFN := f(off, L*d)
		off += L * d
		ffn := f(off, L*3*h*d)
		off += L * 3 * h * d
		final := f(off, d)
		hdr := make([]byte, 256)
		binary.LittleEndian.PutUint32(hdr, 0x616b3432)
		binary.LittleEndian.PutUint32(hdr[4:], 1)
		for i, x := range []int{d, h, L, c.NumHeads, c.NumKVHeads, v, c.MaxSeqLen} {
			binary.LittleEndian.PutUint32(hdr[8+4*i:], uint32(x))
		}
		hdr[36] = 1 // shared classifier
		var out []byte
		for _, part := range [][]byte{hdr, rmsAtt, rmsFFN, final, emb, mats, ffn} {
			out = append(out, part...)
		}
		p := filepath.Join(tmp, "v1.bin")
		os.WriteFile(p, out, 0o644)
		m, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(logitsOf(t, m, toks), want); d != 0 {
			t.Fatalf("v1 differs by %g", d)
		}
	})
	t.Run("untied", func(t *testing.T) {
		b := append([]byte(nil), raw...)
		neg := int32(-512)
		binary.LittleEndian.PutUint32(b[20:], uint32(neg))
		b = append(b, raw[28:28+512*64*4]...) // classifier = embedding
		p := filepath.Join(tmp, "untied.bin")
		os.WriteFile(p, b, 0o644)
		m, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Config.TiedEmbeddings || maxDiff(logitsOf(t, m, toks), want) != 0 {
			t.Fatal("untied checkpoint differs")
		}
	})
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"truncated weights", raw[:len(raw)/2], ErrFormat},
		{"short header", raw[:20], ErrFormat},
		{"zero heads", func() []byte {
			b := append([]byte(nil), raw...)
			binary.LittleEndian.PutUint32(b[12:], 0)
			return b
		}(), ErrConfig},
		{"huge dims", func() []byte {
			b := append([]byte(nil), raw...)
			binary.LittleEndian.PutUint32(b[0:], 1<<30)
			return b
		}(), ErrConfig},
		{"v2 header", func() []byte {
			b := make([]byte, 300)
			binary.LittleEndian.PutUint32(b, 0x616b3432)
			binary.LittleEndian.PutUint32(b[4:], 2)
			return b
		}(), ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(tmp, "bad.bin")
			os.WriteFile(p, tc.data, 0o644)
			if _, err := Load(p, LoadOptions{}); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("missing path", func(t *testing.T) {
		if _, err := Load(filepath.Join(tmp, "nope"), LoadOptions{}); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestLoadGGUFQ4_0: a GGUF file with Q4_0 matrices gives the bits of the
// same file with each Q4_0 tensor replaced by its exact Q8_0 expansion
// (the Q4_0 kernels compute the expansion's sums from half the bytes), with
// the embeddings F32 or Q4_0, the head tied or not; and quantizing the F32
// file to Q4_0 at load gives the bits of the Q4_0 file.
func TestLoadGGUFQ4_0(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	src := filepath.Join(dir, "stories260K.gguf")
	f32, err := Load(src, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	toks := []int32{1, 403, 407, 261, 378}
	want := logitsOf(t, f32, toks)
	tmp := t.TempDir()
	// conv returns a converter to Q4_0 blocks (expand: then to their exact
	// Q8_0 expansion) of the 2-D tensors whose rows are whole blocks.
	conv := func(embed, expand bool) func(ti *gguf.TensorInfo, v []float32) (gguf.GGMLType, []byte, bool) {
		return func(ti *gguf.TensorInfo, v []float32) (gguf.GGMLType, []byte, bool) {
			if len(ti.Dims) != 2 || ti.Dims[0]%32 != 0 || ti.Name == "token_embd.weight" && !embed {
				return 0, nil, false
			}
			rows, cols := int(ti.Dims[1]), int(ti.Dims[0])
			m := tensor.Mat{Rows: rows, Cols: cols, Type: tensor.Q4_0, Q: make([]byte, rows*tensor.Q4RowBytes(cols))}
			tensor.QuantizeQ4_0(m.Q, v)
			if !expand {
				return gguf.GGMLTypeQ4_0, m.Q, true
			}
			tensor.ExpandQ4(&m)
			return gguf.GGMLTypeQ8_0, m.Q, true
		}
	}
	for _, tc := range []struct {
		name  string
		embed bool
		drop  []string
	}{
		{"matrices", false, nil},
		{"embeddings too", true, nil},
		{"tied Q4_0 embeddings", true, []string{"output.weight"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p4, p8 := filepath.Join(tmp, "q4.gguf"), filepath.Join(tmp, "q8.gguf")
			rewriteGGUF(t, src, p4, conv(tc.embed, false), tc.drop...)
			rewriteGGUF(t, src, p8, conv(tc.embed, true), tc.drop...)
			m4, err := Load(p4, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m8, err := Load(p8, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if typ := m4.Layers[0].Wqkv.Type; typ != tensor.Q4_0 && typ != tensor.Q8_0 || m4.Layers[0].W2.Type != tensor.F32 {
				t.Fatalf("types: wqkv %v w2 %v", typ, m4.Layers[0].W2.Type)
			}
			// Q4_0 embeddings stay Q4_0 (half the bytes of their
			// expansion), but for a tied head's Q8_0 expansion (where
			// PackQ4 expands), which they share (below).
			if o := m4.Output; tc.embed && m4.Embed.Type != tensor.Q4_0 &&
				!(len(tc.drop) > 0 && o.Type == tensor.Q8_0) {
				t.Fatalf("Q4_0 embeddings held as %v", m4.Embed.Type)
			}
			// A Q4_0 matrix is held packed only: its GGML blocks are let go.
			for i, w := range []tensor.Mat{m4.Layers[0].Wqkv, m4.Layers[0].Wo, m4.Layers[0].W13, m4.Output} {
				if w.Type == tensor.Q4_0 && (w.P == nil || w.Q != nil) {
					t.Fatalf("matrix %d: Q4_0 held packed %v, GGML blocks %v", i, w.P != nil, w.Q != nil)
				}
			}
			// Where PackQ4 expands (no Q4_0 kernels), a tied head is the
			// embeddings' expansion, in GGML blocks or packed: one copy,
			// not two.
			if o := m4.Output; len(tc.drop) > 0 && o.Type == tensor.Q8_0 &&
				(o.P == nil && &o.Q[0] != &m4.Embed.Q[0] || o.P != nil && &o.P[0] != &m4.Embed.P[0]) {
				t.Fatal("the tied head holds its own copy of the embeddings' Q8_0 expansion")
			}
			// The same weights: the same logits but for the last bits
			// (packed Q8_0 sums in GGML's lanes, packed Q4_0 per block).
			a, b := logitsOf(t, m4, toks), logitsOf(t, m8, toks)
			if d := maxDiff(a, b); d > 1e-5 {
				t.Fatalf("Q4_0 file and its Q8_0 expansion differ by %g", d)
			}
			if len(tc.drop) == 0 && !tc.embed {
				ml, err := Load(src, LoadOptions{Quantize: "q4_0"})
				if err != nil {
					t.Fatal(err)
				}
				if d := maxDiff(logitsOf(t, ml, toks), a); d != 0 {
					t.Fatalf("Q4_0 file and quantize-at-load differ by %g", d)
				}
			}
			// 4-bit weights of a dim-64 model: logits a few units off F32,
			// the same greedy choice.
			if d := maxDiff(a, want); d > 5 || argmax(a) != argmax(want) {
				t.Fatalf("Q4_0 logits differ from F32 by %g (argmax %d vs %d)", d, argmax(a), argmax(want))
			}
		})
	}
}

func TestDummy(t *testing.T) {
	for _, name := range DummyShapes() {
		c, err := DummyConfig(name)
		if err != nil || c.Validate() != nil {
			t.Fatalf("%s: %v %v", name, err, c.Validate())
		}
	}
	if _, err := DummyConfig("nope"); !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v", err)
	}
	c, _ := DummyConfig("default")
	if c.VocabSize < 258 {
		t.Fatalf("default vocab %d does not fit the byte-level dummy tokenizer", c.VocabSize)
	}
	a, b := NewDummy(c, tensor.F32, 42), NewDummy(c, tensor.F32, 42)
	other := NewDummy(c, tensor.F32, 43)
	toks := []int32{256, 72, 105}
	la, lb, lo := logitsOf(t, a, toks), logitsOf(t, b, toks), logitsOf(t, other, toks)
	if maxDiff(la, lb) != 0 {
		t.Fatal("same seed, different logits")
	}
	if maxDiff(la, lo) == 0 {
		t.Fatal("different seeds, same logits")
	}
	var sum, sq float64
	wqkv := a.Layers[0].Wqkv
	tensor.UnpackF32(&wqkv) // a copy: a's stays packed
	for _, v := range wqkv.F32 {
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	n := float64(len(wqkv.F32))
	if std := math.Sqrt(sq/n - (sum/n)*(sum/n)); math.Abs(std-dummyStd) > 0.001 || math.Abs(sum/n) > 0.001 {
		t.Fatalf("weights mean %g std %g, want 0 and %g", sum/n, std, dummyStd)
	}
	for _, v := range la {
		if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 100 {
			t.Fatalf("logit %g not sane", v)
		}
	}
	// The tied head is packed (or not) on its own: Embed keeps the rows
	// its lookups read, and the head holds the same weights.
	if !c.TiedEmbeddings || len(a.Embed.F32) != c.VocabSize*c.Dim || a.Embed.P32 != nil {
		t.Fatalf("tied %v: Embed holds %d rows' floats, packed %v", c.TiedEmbeddings, len(a.Embed.F32)/c.Dim, a.Embed.P32 != nil)
	}
	head := a.Output
	tensor.UnpackF32(&head)
	if !slices.Equal(head.F32, a.Embed.F32) {
		t.Fatal("tied head and Embed hold different weights")
	}
	q := NewDummy(c, tensor.Q8_0, 42)
	if q.Layers[0].Wqkv.Type != tensor.Q8_0 {
		t.Fatal("Q8_0 dummy not quantized")
	}
	if d := maxDiff(logitsOf(t, q, toks), la); d > 0.05 {
		t.Fatalf("Q8_0 dummy differs from F32 by %g", d)
	}
	// Q4_0: the same weights expanded to Q8_0, but for the last bits
	// (packed Q8_0 sums in GGML's lanes, packed Q4_0 per block).
	q4, q4x := NewDummy(c, tensor.Q4_0, 42), NewDummy(c, tensor.Q4_0, 42)
	if typ := q4.Layers[0].W13.Type; typ != tensor.Q4_0 && typ != tensor.Q8_0 {
		t.Fatalf("Q4_0 dummy holds %v weights", typ)
	}
	for i := range q4x.Layers {
		L := &q4x.Layers[i]
		for _, w := range []*tensor.Mat{&L.Wqkv, &L.Wo, &L.W13, &L.W2, &q4x.Output} {
			tensor.ExpandQ4(w)
			tensor.PackQ8(w)
		}
	}
	l4 := logitsOf(t, q4, toks)
	if d := maxDiff(l4, logitsOf(t, q4x, toks)); d > 1e-5 {
		t.Fatalf("Q4_0 dummy differs from its Q8_0 expansion by %g", d)
	}
	if d := maxDiff(l4, la); d > 0.5 {
		t.Fatalf("Q4_0 dummy differs from F32 by %g", d)
	}
}

// TestConcatRowsTypes: fusing Q4_0 with Q4_0 keeps Q4_0, with Q8_0 gives
// Q8_0 (the Q4_0 rows expanded exactly), with F32 gives F32; the weights
// are those of the parts in order.
func TestConcatRowsTypes(t *testing.T) {
	vals := func(rows int, seed uint64) []float32 {
		v := make([]float32, rows*64)
		fillUniform(v, seed, 0, 1)
		return v
	}
	q4 := tensor.Mat{Rows: 2, Cols: 64, Type: tensor.Q4_0, Q: make([]byte, 2*tensor.Q4RowBytes(64))}
	tensor.QuantizeQ4_0(q4.Q, vals(2, 1))
	q8 := tensor.Mat{Rows: 3, Cols: 64, Type: tensor.Q8_0, Q: make([]byte, 3*tensor.Q8RowBytes(64))}
	tensor.QuantizeQ8_0(q8.Q, vals(3, 2))
	f := f32Mat(1, 64, vals(1, 3))
	for _, tc := range []struct {
		name  string
		parts []tensor.Mat
		want  tensor.DType
	}{
		{"q4+q4", []tensor.Mat{q4, q4}, tensor.Q4_0},
		{"q4+q8", []tensor.Mat{q4, q8}, tensor.Q8_0},
		{"q8+q4", []tensor.Mat{q8, q4}, tensor.Q8_0},
		{"q4+f32", []tensor.Mat{q4, f}, tensor.F32},
		{"q4+q8+f32", []tensor.Mat{q4, q8, f}, tensor.F32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := concatRows(tc.parts...)
			if m.Type != tc.want {
				t.Fatalf("type %v, want %v", m.Type, tc.want)
			}
			var want []float32
			for _, p := range tc.parts {
				want = append(want, toF32(p).F32...)
			}
			if m.Rows != len(want)/64 || !slices.Equal(toF32(m).F32, want) {
				t.Fatalf("%d rows, weights differ from the parts'", m.Rows)
			}
		})
	}
}

// TestToF32KeepsF32: an F32 matrix is returned as it is, with nothing
// allocated (concatRows calls it on every part of an F32 fusion).
func TestToF32KeepsF32(t *testing.T) {
	f := f32Mat(4, 64, make([]float32, 4*64))
	if a := testing.AllocsPerRun(10, func() { _ = toF32(f) }); a != 0 {
		t.Fatalf("toF32 of an F32 matrix: %v allocations", a)
	}
	if g := toF32(f); &g.F32[0] != &f.F32[0] {
		t.Fatal("toF32 copied an F32 matrix")
	}
}
