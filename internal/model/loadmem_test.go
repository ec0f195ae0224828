package model

import (
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"govllm/internal/gguf"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// TestLoadMemory: every synthetic GGUF file (each architecture, each
// format llama-quantize wrote) loads without expansion: the weights the
// model holds are within 10 % of the file's tensor bytes (the packed
// layouts add at most a few percent; an expansion to Q8_0 or F32 would add
// 70 % or more; a tied embedding kept beside its packed head, 15 % here),
// and the heap holds nothing else of the file (the loader reads one tensor
// at a time; a kept copy of the data section would double it). Q4_0 files
// are skipped at levels without 4-bit Q4_0 kernels, which expand them.
func TestLoadMemory(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testmodels.Dir(t, "synthetic"), "*", "*.gguf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no synthetic files (%v)", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := gguf.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var fileBytes int64
			for _, ti := range f.Tensors {
				fileBytes += int64(ti.Size)
				if ti.Type == gguf.GGMLTypeQ4_0 && !tensor.KeepsQ4() {
					t.Skipf("level %s expands Q4_0 to Q8_0 (no 4-bit Q4_0 kernels)", tensor.Level())
				}
			}
			h0 := liveHeap()
			m, err := Load(path, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			grown := liveHeap() - h0
			rope := heldBytes(reflect.ValueOf(&m.rope), map[uintptr]bool{}) + heldBytes(reflect.ValueOf(&m.ropeLocal), map[uintptr]bool{})
			held := heldBytes(reflect.ValueOf(m), map[uintptr]bool{})
			weights := held - rope
			t.Logf("file tensors %d B, model weights %d B (%.3f×), rope tables %d B, heap grew %d B", fileBytes, weights, float64(weights)/float64(fileBytes), rope, grown)
			if weights > fileBytes*110/100 {
				t.Errorf("the model holds %d B of weights for %d B of tensors in the file (> 1.10×)", weights, fileBytes)
			}
			if grown > held*105/100+64<<10 {
				t.Errorf("the heap grew %d B for a model of %d B: something else of the load is kept", grown, held)
			}
			runtime.KeepAlive(m)
		})
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// heldBytes sums the backing arrays of the slices of numbers reachable
// from v (through pointers, structs, slices and arrays; each array
// once, by its address).
func heldBytes(v reflect.Value, seen map[uintptr]bool) int64 {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return heldBytes(v.Elem(), seen)
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += heldBytes(v.Field(i), seen)
		}
		return n
	case reflect.Array:
		var n int64
		for i := range v.Len() {
			n += heldBytes(v.Index(i), seen)
		}
		return n
	case reflect.Slice:
		if v.Cap() == 0 || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		switch v.Type().Elem().Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice, reflect.Array, reflect.Map, reflect.String:
			var n int64
			for i := range v.Len() {
				n += heldBytes(v.Index(i), seen)
			}
			return n
		}
		return int64(v.Cap()) * int64(v.Type().Elem().Size())
	}
	return 0
}
