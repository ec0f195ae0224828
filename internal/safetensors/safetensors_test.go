package safetensors

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"govllm/internal/testmodels"
)

// build makes a file from a JSON header and a data section.
func build(header string, data []byte) []byte {
	b := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

func TestParse(t *testing.T) {
	data := make([]byte, 24)
	data[0] = 7
	b := build(`{"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[2,2],"data_offsets":[16,24]},"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, data)
	f, err := Parse("x.safetensors", b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["format"] != "pt" || strings.Join(f.Names, ",") != "a,b" {
		t.Fatalf("metadata %v names %v", f.Metadata, f.Names)
	}
	a := f.Tensor("a")
	if a.DType != F32 || a.NumElements() != 4 {
		t.Fatalf("a = %+v", a)
	}
	d, err := f.TensorData(a)
	if err != nil || len(d) != 16 || d[0] != 7 {
		t.Fatalf("data %v %v", d, err)
	}
	if f.Tensor("zz") != nil {
		t.Fatal("unknown tensor found")
	}
}

func TestMalformed(t *testing.T) {
	long := make([]byte, 8)
	binary.LittleEndian.PutUint64(long, 1<<40)
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", []byte{1, 2, 3}},
		{"huge header length", long},
		{"header past end", build(`{}`, nil)[:9]},
		{"not json", build(`{xx`, nil)},
		{"json array", build(`[1,2]`, nil)},
		{"missing fields", build(`{"a":{"dtype":"F32"}}`, make([]byte, 4))},
		{"unknown dtype", build(`{"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4))},
		{"size mismatch", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 8))},
		{"past data", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 4))},
		{"negative shape", build(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil)},
		{"reversed offsets", build(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, make([]byte, 4))},
		{"three offsets", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 8))},
		{"overlap", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8))},
		{"bad metadata", build(`{"__metadata__":{"a":1}}`, nil)},
		{"shape overflow", build(`{"a":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,0]}}`, nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.safetensors", tc.data)
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("err = %v, want ErrFormat", err)
			}
			if !strings.Contains(err.Error(), "bad.safetensors") {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

func TestOpenDir(t *testing.T) {
	write := func(dir, name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shard1 := build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, []byte{1, 0, 0, 0})
	shard2 := build(`{"b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, []byte{2, 0, 0, 0})
	tests := []struct {
		name    string
		index   string
		wantErr bool
	}{
		{"indexed", `{"metadata":{},"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}}`, false},
		{"no index", "", false},
		{"wrong shard", `{"weight_map":{"a":"s2.safetensors","b":"s2.safetensors"}}`, true},
		{"path escape", `{"weight_map":{"a":"../s1.safetensors"}}`, true},
		{"missing shard", `{"weight_map":{"a":"s3.safetensors"}}`, true},
		{"bad json", `{`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(dir, "s1.safetensors", shard1)
			write(dir, "s2.safetensors", shard2)
			if tc.index != "" {
				write(dir, IndexFile, []byte(tc.index))
			}
			s, err := OpenDir(dir)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ReadData(); err != nil {
				t.Fatal(err)
			}
			f, ti := s.Tensor("b")
			if ti == nil || ti.DType != BF16 {
				t.Fatalf("b = %+v", ti)
			}
			d, err := f.TensorData(ti)
			if err != nil || d[0] != 2 {
				t.Fatalf("b data %v %v", d, err)
			}
		})
	}
	t.Run("duplicate tensor", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "s1.safetensors", shard1)
		write(dir, "s2.safetensors", shard1)
		if _, err := OpenDir(dir); err == nil {
			t.Fatal("want error")
		}
	})
	t.Run("empty dir", func(t *testing.T) {
		if _, err := OpenDir(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestStories260KHF(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K-hf")
	f, err := ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Names) != 47 || f.Metadata["format"] != "pt" || f.DataOffset != 8+4856 {
		t.Fatalf("%d tensors, metadata %v, data at %d", len(f.Names), f.Metadata, f.DataOffset)
	}
	e := f.Tensor("model.embed_tokens.weight")
	if e == nil || e.DType != F32 || len(e.Shape) != 2 || e.Shape[0] != 512 || e.Shape[1] != 64 {
		t.Fatalf("embed = %+v", e)
	}
	if err := f.ReadData(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("mem", raw)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.TensorData(e)
	b, _ := g.TensorData(g.Tensor(e.Name))
	if string(a) != string(b) {
		t.Fatal("ReadFile+ReadData and Parse disagree")
	}
}

func FuzzHeader(f *testing.F) {
	f.Add(build(`{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[],"data_offsets":[8,10]}}`, make([]byte, 10)))
	f.Add(build(`{}`, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse("fuzz", b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		for _, n := range g.Names {
			ti := g.Tensor(n)
			d, err := g.TensorData(ti)
			if err != nil || int64(len(d)) != ti.NumElements()*int64(ti.DType.Size()) {
				t.Fatalf("tensor %s: %d bytes, %v", n, len(d), err)
			}
		}
	})
}
