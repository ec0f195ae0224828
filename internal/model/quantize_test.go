package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// llamaQuantizePure is, per format, the SHA-256 of the tensor data that
// llama.cpp's llama-quantize (commit dc02e1f83, ../shared/tools) writes for
// the 15 quantized tensors (sorted by name) of the synthetic qwen2 F32 file:
//
//	llama-quantize --pure qwen2/qwen2-F32.gguf out.gguf TYPE
var llamaQuantizePure = []struct{ format, sha string }{
	{"Q2_K", "cc3c6cb2f383d7a3205b0fdebfb2cc5cefd8b4bc17b4b2d0114d31d3b60f76da"},
	{"Q3_K", "e27a07c633cd05b6ed2c8c71ddc96c7bba688caeb69c31b760a955391b923ffc"},
	{"Q4_K", "6855c7467744c7e811e8bc61b67ca28b6fd7891c81fbf4cf557aa77c929b3c46"},
	{"Q5_K", "62fdeccd90a4707ac41c1c9bc2b9eae82a8497575a70f4f9f5892830a7926065"},
	{"Q6_K", "55235fd77deba90e01dc3be7eda61cd74a41eb8156c9100152392f111142a4cd"},
	{"Q4_1", "f349db0a25e12d7812e21feefd557f687a101a4e042665ac109892afd6615a7a"},
	{"Q5_0", "394e45621d5dea22ae58a6e73a2657aeece5c07e4a7e3404194211eeea04ca48"},
	{"Q5_1", "042a34e403fa2d4c51d81f34be12f75ea4ca37a81dcf488e863e5b5324f0c881"},
	{"IQ4_NL", "4b42c58d0b720437222c7f88bbda3fc27128863a89f7ac7bcac249df397bc11a"},
	{"IQ4_XS", "08d93570cde44d3622e4a3e6027b4155700969f3ec74e25236b081694923947f"},
	{"Q8_0", "005d007596a4a7def116a009e0e1a0d805abf844b490e5b1c59adde4770ae8ec"},
	{"Q4_0", "c924b9332786ab838c9f1b3a876c16d81b8e660dc135c7f46b05b7cf20a977e8"},
}

func qwen2F32(t *testing.T) string {
	return filepath.Join(testmodels.Dir(t, "synthetic"), "qwen2", "qwen2-F32.gguf")
}

// TestQuantizeMatchesLlamaQuantize: every codec's Quantize writes the bytes
// llama-quantize writes for the same F32 tensors (2.3M values: token
// embeddings, attention and FFN matrices of 256 and 512 columns).
func TestQuantizeMatchesLlamaQuantize(t *testing.T) {
	f, err := gguf.ReadFile(qwen2F32(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ReadTensorData(); err != nil {
		t.Fatal(err)
	}
	var weights [][]float32
	tensors := slices.Clone(f.Tensors)
	slices.SortFunc(tensors, func(a, b gguf.TensorInfo) int { return strings.Compare(a.Name, b.Name) })
	for i := range tensors {
		ti := &tensors[i]
		if len(ti.Dims) != 2 || strings.HasSuffix(ti.Name, "_norm.weight") || !strings.HasSuffix(ti.Name, ".weight") {
			continue
		}
		raw, err := f.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, len(raw)/4)
		for k := range v {
			v[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
		weights = append(weights, v)
	}
	if len(weights) != 15 {
		t.Fatalf("found %d weight tensors, want 15", len(weights))
	}
	for _, tc := range llamaQuantizePure {
		t.Run(tc.format, func(t *testing.T) {
			var c *tensor.Codec
			for _, d := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL,
				tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_XS} {
				if tensor.CodecOf(d).Name == tc.format {
					c = tensor.CodecOf(d)
				}
			}
			h := sha256.New()
			for _, w := range weights {
				q := make([]byte, len(w)/c.BlockSize*c.BlockBytes)
				c.Quantize(q, w)
				h.Write(q)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.sha {
				t.Fatalf("SHA-256 %s, llama-quantize's %s", got, tc.sha)
			}
		})
	}
}

// sameMat reports the first difference between two matrices (format,
// shape, bytes, parts), "" if none.
func sameMat(a, b *tensor.Mat) string {
	switch {
	case a.Type != b.Type || a.Rows != b.Rows || a.Cols != b.Cols || len(a.Parts) != len(b.Parts):
		return fmt.Sprintf("%v %d×%d (%d parts) vs %v %d×%d (%d parts)", a.Type, a.Rows, a.Cols, len(a.Parts), b.Type, b.Rows, b.Cols, len(b.Parts))
	case !bytes.Equal(a.Q, b.Q) || !bytes.Equal(a.P, b.P) || !slices.Equal(a.F32, b.F32):
		return fmt.Sprintf("%v %d×%d: the data differ", a.Type, a.Rows, a.Cols)
	}
	for i := range a.Parts {
		if d := sameMat(&a.Parts[i], &b.Parts[i]); d != "" {
			return fmt.Sprintf("part %d: %s", i, d)
		}
	}
	return ""
}

// modelMats lists a model's weight matrices with names.
func modelMats(m *Model) map[string]*tensor.Mat {
	out := map[string]*tensor.Mat{"embed": &m.Embed, "output": &m.Output}
	for i := range m.Layers {
		L := &m.Layers[i]
		for k, w := range map[string]*tensor.Mat{"wqkv": &L.Wqkv, "wo": &L.Wo, "w13": &L.W13, "w2": &L.W2} {
			out[fmt.Sprintf("layer %d %s", i, k)] = w
		}
	}
	return out
}

// TestQuantizationMixMatchesLlamaQuantize: the F32 qwen2 file loaded with
// --quantization q4_k_m (q6_k) is, matrix by matrix, the model loaded from
// the file llama-quantize made of it (format of each tensor, q|k|v parts
// of different formats included, and bytes); the dummy model of the same
// shape has the same formats and sizes.
func TestQuantizationMixMatchesLlamaQuantize(t *testing.T) {
	for _, tc := range []struct{ name, file string }{{"q4_k_m", "Q4_K_M"}, {"q6_k", "Q6_K"}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(qwen2F32(t), LoadOptions{Quantize: tc.name})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Load(filepath.Join(filepath.Dir(qwen2F32(t)), "qwen2-"+tc.file+".gguf"), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			dummy, err := NewDummyQuantized(want.Config, tc.name, 1)
			if err != nil {
				t.Fatal(err)
			}
			wm, dm := modelMats(want), modelMats(dummy)
			for name, g := range modelMats(got) {
				if d := sameMat(g, wm[name]); d != "" {
					t.Errorf("%s: %s", name, d)
				}
				if matBytes(dm[name]) != matBytes(wm[name]) || dm[name].Type != wm[name].Type {
					t.Errorf("dummy %s: %v, %d bytes; llama-quantize's %v, %d bytes", name, dm[name].Type, matBytes(dm[name]), wm[name].Type, matBytes(wm[name]))
				}
			}
		})
	}
}

// TestQuantizationNames: unknown names are refused with the list.
func TestQuantizationNames(t *testing.T) {
	for _, n := range append(QuantizationNames(), "", "none") {
		if err := CheckQuantization(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	err := CheckQuantization("q4_k_s")
	if err == nil || !strings.Contains(err.Error(), "q4_k_m, q5_k_m") {
		t.Fatalf("q4_k_s: %v", err)
	}
}

// TestQuantizedF32MatchesGoldens: the synthetic qwen2 F32 file loaded with
// --quantization q4_k_m (q6_k) reproduces llama.cpp's goldens for the file
// llama-quantize made of it, within the same tolerances as that file.
func TestQuantizedF32MatchesGoldens(t *testing.T) {
	pool := tensor.NewPool(2)
	defer pool.Close()
	for _, sm := range testmodels.SyntheticModels(t) {
		name := map[string]string{"Q4_K_M": "q4_k_m", "Q6_K": "q6_k"}[sm.Quant]
		if sm.Arch != "qwen2" || name == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m, err := Load(qwen2F32(t), LoadOptions{Quantize: name})
			if err != nil {
				t.Fatal(err)
			}
			checkGoldens(t, m, pool, &sm)
		})
	}
}
