package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"govllm/internal/testmodels"
)

func sample(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	kvs := []KV{
		{"general.architecture", "llama"},
		{"general.alignment", uint32(64)},
		{"llama.block_count", uint32(2)},
		{"llama.rope.freq_base", float32(10000)},
		{"neg", int32(-5)},
		{"big", uint64(1 << 40)},
		{"flag", true},
		{"f64", 2.5},
		{"tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>", "a"}},
		{"tokenizer.ggml.scores", []float32{0, 0, 0, -1.5}},
		{"tokenizer.ggml.token_type", []int32{2, 3, 3, 1}},
		{"u8s", []uint8{1, 2, 3}},
		{"i16s", []int16{-1, 2}},
		{"nested", Value{Type: TypeArray, ElemType: TypeArray, v: []Value{
			{Type: TypeArray, ElemType: TypeUint32, v: []uint32{7, 8}},
			{Type: TypeArray, ElemType: TypeString, v: []string{"x"}},
		}}},
	}
	w := make([]byte, 4*3*4)
	for i := range 12 {
		binary.LittleEndian.PutUint32(w[4*i:], uint32(i))
	}
	q := make([]byte, 34*2)
	q[2] = 5
	tensors := []TensorData{
		{Name: "a", Dims: []uint64{4, 3}, Type: GGMLTypeF32, Data: w},
		{Name: "q", Dims: []uint64{64}, Type: GGMLTypeQ8_0, Data: q},
		{Name: "h", Dims: []uint64{3}, Type: GGMLTypeF16, Data: []byte{0, 0x3c, 0, 0x40, 0, 0}},
	}
	if err := Encode(&buf, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	b := sample(t)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Alignment != 64 || f.DataOffset%64 != 0 || f.Version != 3 {
		t.Fatalf("alignment %d data offset %d version %d", f.Alignment, f.DataOffset, f.Version)
	}
	// Before ReadTensorData a tensor is read from the file on its own.
	lazy, err := f.TensorData(f.Tensor("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ReadTensorData(); err != nil {
		t.Fatal(err)
	}
	held, err := f.TensorData(f.Tensor("a"))
	if err != nil || !bytes.Equal(lazy, held) || len(held) == 0 {
		t.Fatalf("tensor a read alone %x, from the data section %x (%v)", lazy, held, err)
	}
	own, err := f.ReadTensor(f.Tensor("a"))
	if err != nil || !bytes.Equal(own, held) || &own[0] == &held[0] {
		t.Fatalf("ReadTensor after ReadTensorData: %x (%v), want a copy of %x", own, err, held)
	}
	tests := []struct {
		name string
		get  func() (any, error)
		want any
	}{
		{"string", func() (any, error) { return f.String("general.architecture") }, "llama"},
		{"uint", func() (any, error) { return f.Uint("llama.block_count") }, uint64(2)},
		{"uint64", func() (any, error) { return f.Uint("big") }, uint64(1 << 40)},
		{"int", func() (any, error) { return f.Int("neg") }, int64(-5)},
		{"float", func() (any, error) { return f.Float("llama.rope.freq_base") }, 10000.0},
		{"f64", func() (any, error) { return f.Float("f64") }, 2.5},
		{"bool", func() (any, error) { return f.Bool("flag") }, true},
		{"strings", func() (any, error) { return f.Strings("tokenizer.ggml.tokens") }, []string{"<unk>", "<s>", "</s>", "a"}},
		{"float32s", func() (any, error) { return f.Float32s("tokenizer.ggml.scores") }, []float32{0, 0, 0, -1.5}},
		{"int32s", func() (any, error) { return f.Int32s("tokenizer.ggml.token_type") }, []int32{2, 3, 3, 1}},
		{"ints", func() (any, error) { return f.Ints("i16s") }, []int64{-1, 2}},
		{"u8 ints", func() (any, error) { return f.Ints("u8s") }, []int64{1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.get()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	nested := f.Metadata["nested"].Any().([]Value)
	if len(nested) != 2 || !reflect.DeepEqual(nested[0].Any(), []uint32{7, 8}) || !reflect.DeepEqual(nested[1].Any(), []string{"x"}) {
		t.Fatalf("nested = %+v", nested)
	}

	t.Run("errors", func(t *testing.T) {
		if _, err := f.String("missing"); !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("missing key: %v", err)
		}
		var te *TypeError
		if _, err := f.String("llama.block_count"); !errors.As(err, &te) {
			t.Fatalf("wrong type: %v", err)
		}
		if _, err := f.Uint("neg"); err == nil {
			t.Fatal("negative as uint: want error")
		}
		if _, err := f.Uint("flag"); err == nil {
			t.Fatal("bool as uint: want error")
		}
		if _, err := f.Strings("tokenizer.ggml.scores"); !errors.As(err, &te) {
			t.Fatalf("wrong array type: %v", err)
		}
	})

	t.Run("tensors", func(t *testing.T) {
		a := f.Tensor("a")
		if a == nil || a.Type != GGMLTypeF32 || a.NumElements() != 12 || a.Size != 48 {
			t.Fatalf("a = %+v", a)
		}
		d, err := f.TensorData(a)
		if err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint32(d[44:]) != 11 {
			t.Fatalf("a data = %v", d)
		}
		q := f.Tensor("q")
		if q.Size != 68 || q.Offset%64 != 0 {
			t.Fatalf("q = %+v", q)
		}
		qd, _ := f.TensorData(q)
		if qd[2] != 5 {
			t.Fatal("q data")
		}
		if f.Tensor("nope") != nil {
			t.Fatal("unknown tensor found")
		}
	})

	// Parse from memory gives the same.
	g, err := Parse("mem", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Keys, f.Keys) || !reflect.DeepEqual(g.Tensors, f.Tensors) {
		t.Fatal("Parse and ReadFile disagree")
	}
}

func TestMalformed(t *testing.T) {
	good := sample(t)
	le32 := func(b []byte, off int, v uint32) []byte {
		c := bytes.Clone(b)
		binary.LittleEndian.PutUint32(c[off:], v)
		return c
	}
	le64 := func(b []byte, off int, v uint64) []byte {
		c := bytes.Clone(b)
		binary.LittleEndian.PutUint64(c[off:], v)
		return c
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"bad magic", le32(good, 0, 0x12345678)},
		{"version 1", le32(good, 4, 1)},
		{"version 99", le32(good, 4, 99)},
		{"huge tensor count", le64(good, 8, 1<<60)},
		{"huge kv count", le64(good, 16, 1<<60)},
		{"huge key length", le64(good, 24, 1<<62)},
		{"truncated header", good[:20]},
		{"truncated metadata", good[:100]},
		{"truncated data", good[:len(good)-10]},
		{"unknown value type", le32(good, 24+8+len("general.architecture"), 77)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.gguf", tc.data)
			if err == nil {
				t.Fatal("want error")
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			if !bytes.Contains([]byte(err.Error()), []byte("bad.gguf")) {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name    string
		kvs     []KV
		tensors []TensorData
	}{
		{"bad alignment", []KV{{"general.alignment", uint32(3)}}, nil},
		{"unsupported value", []KV{{"x", struct{}{}}}, nil},
		{"size mismatch", nil, []TensorData{{Name: "t", Dims: []uint64{4}, Type: GGMLTypeF32, Data: make([]byte, 3)}}},
		{"q8 not block multiple", nil, []TensorData{{Name: "t", Dims: []uint64{16}, Type: GGMLTypeQ8_0, Data: make([]byte, 17)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Encode(&bytes.Buffer{}, tc.kvs, tc.tensors); err == nil {
				t.Fatal("want error")
			}
		})
	}
}

func TestStories260K(t *testing.T) {
	path := filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil || len(toks) != 512 || toks[1] != "<s>" {
		t.Fatalf("tokens: %v (%d)", err, len(toks))
	}
	if n, err := f.Uint("llama.block_count"); err != nil || n != 5 {
		t.Fatalf("block_count %d %v", n, err)
	}
	if len(f.Tensors) != 48 {
		t.Fatalf("%d tensors", len(f.Tensors))
	}
	if err := f.ReadTensorData(); err != nil {
		t.Fatal(err)
	}
	emb, _ := f.TensorData(f.Tensor("token_embd.weight"))
	out, _ := f.TensorData(f.Tensor("output.weight"))
	if !bytes.Equal(emb, out) {
		t.Fatal("output.weight should equal token_embd.weight in this file")
	}
	// Re-encoding everything gives a file that parses to the same content.
	var kvs []KV
	for _, k := range f.Keys {
		kvs = append(kvs, KV{k, f.Metadata[k]})
	}
	var ts []TensorData
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		d, err := f.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, TensorData{ti.Name, ti.Dims, ti.Type, d})
	}
	var buf bytes.Buffer
	if err := Encode(&buf, kvs, ts); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), raw) {
		t.Fatal("re-encoding the file does not reproduce its bytes")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample(f))
	if dir := testmodels.Dir(f, "stories260K"); dir != "" {
		// The real file's metadata with its two smallest tensors.
		g, err := ReadFile(filepath.Join(dir, "stories260K.gguf"))
		if err != nil {
			f.Fatal(err)
		}
		if err := g.ReadTensorData(); err != nil {
			f.Fatal(err)
		}
		var kvs []KV
		for _, k := range g.Keys {
			kvs = append(kvs, KV{k, g.Metadata[k]})
		}
		var ts []TensorData
		for _, name := range []string{"output_norm.weight", "blk.0.attn_norm.weight"} {
			ti := g.Tensor(name)
			d, _ := g.TensorData(ti)
			ts = append(ts, TensorData{ti.Name, ti.Dims, ti.Type, d})
		}
		var buf bytes.Buffer
		if err := Encode(&buf, kvs, ts); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse("fuzz", b)
		if err != nil {
			return
		}
		for _, k := range g.Keys {
			_, _ = g.String(k)
			_, _ = g.Uint(k)
			_, _ = g.Ints(k)
			_, _ = g.Strings(k)
		}
		for i := range g.Tensors {
			if _, err := g.TensorData(&g.Tensors[i]); err != nil {
				t.Fatal(err)
			}
		}
	})
}
