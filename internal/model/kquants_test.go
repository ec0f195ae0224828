package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/tensor"
)

// GGML k-quant super-blocks (the encoders below lay them out by hand, from
// GGML's block_q4_K and block_q6_K, independently of tensor's codecs).
const (
	qkK         = 256
	q4KBlockLen = 144 // f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles
	q6KBlockLen = 210 // 128 bytes low nibbles, 64 bytes high bit pairs, 16 int8 scales, f16 d
)

// lcg is a tiny deterministic byte source for test blocks.
type lcg uint32

func (s *lcg) next() uint32 { *s = *s*1664525 + 1013904223; return uint32(*s >> 8) }

// encodeQ4K packs one super-block the way GGML's reference quantizer lays
// it out: scales ls[8] and mins lm[8] (6 bits), quants q[256] (4 bits).
func encodeQ4K(d, dmin float32, ls, lm [8]uint8, q []uint8) []byte {
	b := make([]byte, q4KBlockLen)
	binary.LittleEndian.PutUint16(b, tensor.F32ToF16(d))
	binary.LittleEndian.PutUint16(b[2:], tensor.F32ToF16(dmin))
	s := b[4:16]
	for j := 0; j < 8; j++ {
		if j < 4 {
			s[j] = ls[j]
			s[j+4] = lm[j]
		} else {
			s[j+4] = ls[j]&0xF | (lm[j]&0xF)<<4
			s[j-4] |= (ls[j] >> 4) << 6
			s[j] |= (lm[j] >> 4) << 6
		}
	}
	qs := b[16:]
	for j := 0; j < qkK; j += 64 {
		for l := 0; l < 32; l++ {
			qs[j/2+l] = q[j+l] | q[j+l+32]<<4
		}
	}
	return b
}

// encodeQ6K packs one super-block as GGML's reference quantizer does:
// 6-bit L[256] (q+32), int8 scales[16], f16 d.
func encodeQ6K(d float32, sc [16]int8, L []uint8) []byte {
	b := make([]byte, q6KBlockLen)
	ql, qh := b[:128], b[128:192]
	for j := 0; j < qkK; j += 128 {
		for l := 0; l < 32; l++ {
			q1, q2, q3, q4 := L[j+l]&0xF, L[j+l+32]&0xF, L[j+l+64]&0xF, L[j+l+96]&0xF
			ql[j/2+l] = q1 | q3<<4
			ql[j/2+l+32] = q2 | q4<<4
			qh[j/4+l] = L[j+l]>>4 | (L[j+l+32]>>4)<<2 | (L[j+l+64]>>4)<<4 | (L[j+l+96]>>4)<<6
		}
	}
	for i, s := range sc {
		b[192+i] = byte(s)
	}
	binary.LittleEndian.PutUint16(b[208:], tensor.F32ToF16(d))
	return b
}

func randQ4K(r *lcg) (blk []byte, want []float32) {
	d, dmin := float32(0.0125), float32(0.00390625) // exact in f16
	var ls, lm [8]uint8
	for j := range ls {
		ls[j], lm[j] = uint8(r.next()%64), uint8(r.next()%64)
	}
	q := make([]uint8, qkK)
	want = make([]float32, qkK)
	dh, mh := tensor.F16ToF32(tensor.F32ToF16(d)), tensor.F16ToF32(tensor.F32ToF16(dmin))
	for i := range q {
		q[i] = uint8(r.next() % 16)
		want[i] = dh*float32(ls[i/32])*float32(q[i]) - mh*float32(lm[i/32])
	}
	return encodeQ4K(d, dmin, ls, lm, q), want
}

func randQ6K(r *lcg) (blk []byte, want []float32) {
	d := float32(0.001953125)
	var sc [16]int8
	for j := range sc {
		sc[j] = int8(r.next()%256 - 128)
	}
	L := make([]uint8, qkK)
	want = make([]float32, qkK)
	for i := range L {
		L[i] = uint8(r.next() % 64)
		want[i] = d * float32(sc[i/16]) * float32(int(L[i])-32)
	}
	return encodeQ6K(d, sc, L), want
}

func TestKQuantDequant(t *testing.T) {
	tests := []struct {
		name string
		gen  func(*lcg) ([]byte, []float32)
		typ  tensor.DType
	}{
		{"q4_K", randQ4K, tensor.Q4_K},
		{"q6_K", randQ6K, tensor.Q6_K},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := lcg(7)
			var data []byte
			var want []float32
			for range 3 {
				b, w := tc.gen(&r)
				data, want = append(data, b...), append(want, w...)
			}
			got := make([]float32, len(want))
			tensor.CodecOf(tc.typ).Dequantize(got, data)
			for i := range want {
				if math.Abs(float64(got[i]-want[i])) > 1e-6*math.Max(1, math.Abs(float64(want[i]))) {
					t.Fatalf("value %d: got %g, want %g", i, got[i], want[i])
				}
			}
		})
	}
}

// TestLoadKQuantGGUF writes a small model with Q4_K and Q6_K matrices and
// checks that every matrix keeps its own format (the fused Q/K/V of Q4_K
// and Q6_K parts stacked), in the file's bytes, and that its logits are
// those of the same weights stored as F32 within the error of quantizing
// the activations to Q8_K (GGML's arithmetic; the goldens in
// TestSyntheticGoldens hold it to llama.cpp's).
func TestLoadKQuantGGUF(t *testing.T) {
	c := Config{Dim: 256, HiddenDim: 512, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 64,
		VocabSize: 300, MaxSeqLen: 64, RMSNormEps: 1e-5, RopeTheta: 10000}
	r := lcg(3)
	f32Bytes := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	ones := make([]float32, c.Dim)
	for i := range ones {
		ones[i] = 1
	}
	emb := make([]float32, c.VocabSize*c.Dim)
	fillUniform(emb, 1, 1, 0.03)
	var kq, fp []gguf.TensorData
	add := func(name string, dims []uint64, typ gguf.GGMLType, q []byte, f []float32) {
		kq = append(kq, gguf.TensorData{Name: name, Dims: dims, Type: typ, Data: q})
		fp = append(fp, gguf.TensorData{Name: name, Dims: dims, Type: gguf.GGMLTypeF32, Data: f32Bytes(f)})
	}
	mat := func(name string, rows, cols int, typ gguf.GGMLType) {
		var q []byte
		var f []float32
		for range rows * cols / qkK {
			var b []byte
			var w []float32
			if typ == gguf.GGMLTypeQ4_K {
				b, w = randQ4K(&r)
			} else {
				b, w = randQ6K(&r)
			}
			q, f = append(q, b...), append(f, w...)
		}
		add(name, []uint64{uint64(cols), uint64(rows)}, typ, q, f)
	}
	vec := func(name string) {
		kq = append(kq, gguf.TensorData{Name: name, Dims: []uint64{uint64(c.Dim)}, Type: gguf.GGMLTypeF32, Data: f32Bytes(ones)})
		fp = append(fp, kq[len(kq)-1])
	}
	kq = append(kq, gguf.TensorData{Name: "token_embd.weight", Dims: []uint64{uint64(c.Dim), uint64(c.VocabSize)}, Type: gguf.GGMLTypeF32, Data: f32Bytes(emb)})
	fp = append(fp, kq[0])
	vec("output_norm.weight")
	mat("output.weight", c.VocabSize, c.Dim, gguf.GGMLTypeQ6_K)
	for l := 0; l < c.NumLayers; l++ {
		p := "blk." + string(rune('0'+l)) + "."
		vec(p + "attn_norm.weight")
		vec(p + "ffn_norm.weight")
		mat(p+"attn_q.weight", c.QDim(), c.Dim, gguf.GGMLTypeQ4_K)
		mat(p+"attn_k.weight", c.KVDim(), c.Dim, gguf.GGMLTypeQ4_K)
		mat(p+"attn_v.weight", c.KVDim(), c.Dim, gguf.GGMLTypeQ6_K)
		mat(p+"attn_output.weight", c.Dim, c.QDim(), gguf.GGMLTypeQ4_K)
		mat(p+"ffn_gate.weight", c.HiddenDim, c.Dim, gguf.GGMLTypeQ4_K)
		mat(p+"ffn_up.weight", c.HiddenDim, c.Dim, gguf.GGMLTypeQ4_K)
		mat(p+"ffn_down.weight", c.Dim, c.HiddenDim, gguf.GGMLTypeQ6_K)
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "llama.embedding_length", Value: uint32(c.Dim)},
		{Key: "llama.feed_forward_length", Value: uint32(c.HiddenDim)},
		{Key: "llama.block_count", Value: uint32(c.NumLayers)},
		{Key: "llama.attention.head_count", Value: uint32(c.NumHeads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(c.NumKVHeads)},
		{Key: "llama.context_length", Value: uint32(c.MaxSeqLen)},
		{Key: "llama.rope.freq_base", Value: float32(10000)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(1e-5)},
	}
	dir := t.TempDir()
	write := func(name string, ts []gguf.TensorData) string {
		var buf bytes.Buffer
		if err := gguf.Encode(&buf, kvs, ts); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk, err := Load(write("k.gguf", kq), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mf, err := Load(write("f.gguf", fp), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	L := mk.Layers[1]
	if L.Wqkv.Type != tensor.Stacked || L.Wqkv.Parts[0].Type != tensor.Q4_K || L.Wqkv.Parts[2].Type != tensor.Q6_K ||
		L.W13.Type != tensor.Q4_K || L.W2.Type != tensor.Q6_K || mk.Output.Type != tensor.Q6_K {
		t.Fatalf("k-quant matrices should keep their formats: Wqkv %d, W13 %d, W2 %d, output %d", L.Wqkv.Type, L.W13.Type, L.W2.Type, mk.Output.Type)
	}
	// The GGML blocks or, at a level with Q6_K kernels, the packed layout
	// of the same size (the last group of 16 rows is full here).
	if got, want := len(L.W2.Q)+len(L.W2.P), c.Dim*c.HiddenDim/qkK*q6KBlockLen; got != want {
		t.Fatalf("W2 holds %d bytes, the file %d", got, want)
	}
	toks := []int32{1, 20, 33, 299}
	lk, lf := logitsOf(t, mk, toks), logitsOf(t, mf, toks)
	var scale float64
	for _, v := range lf {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	if d := maxDiff(lk, lf); d > 0.05*scale || d == 0 {
		t.Fatalf("k-quant GGUF differs from its F32 expansion by %g (max |logit| %g): want a Q8_K activation error, > 0 and < 5%%", d, scale)
	}
}
