//go:build !purego

package tensor

import (
	"syscall"
	"testing"
	"unsafe"
)

// guardedMem maps n bytes (rounded up to whole pages) between two
// inaccessible pages, so that a kernel touching memory just outside the
// slice it was given faults instead of reading or writing neighbouring
// memory unnoticed. data is the accessible part; free unmaps it all.
func guardedMem(t *testing.T, n int) (data []byte, free func()) {
	t.Helper()
	pg := syscall.Getpagesize()
	size := (n + pg - 1) / pg * pg
	mem, err := syscall.Mmap(-1, 0, pg+size+pg, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	for _, g := range [][]byte{mem[:pg], mem[pg+size:]} {
		if err := syscall.Mprotect(g, syscall.PROT_NONE); err != nil {
			t.Fatal("mprotect:", err)
		}
	}
	return mem[pg : pg+size], func() { syscall.Munmap(mem) }
}

// guardedBytes returns n bytes that end flush against an inaccessible page.
func guardedBytes(t *testing.T, n int) (b []byte, free func()) {
	t.Helper()
	data, free := guardedMem(t, n)
	return data[len(data)-n:], free
}

// guardedFloats returns n floats that end flush against an inaccessible
// page: a kernel touching a float past the last faults.
func guardedFloats(t *testing.T, n int) (f []float32, free func()) {
	t.Helper()
	data, free := guardedMem(t, 4*n)
	if n == 0 {
		return []float32{}, free
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&data[len(data)-4*n])), n), free
}

// guardedFloatsHead returns n floats that start flush against an
// inaccessible page: a kernel touching a float before the first faults.
func guardedFloatsHead(t *testing.T, n int) (f []float32, free func()) {
	t.Helper()
	data, free := guardedMem(t, 4*n)
	if n == 0 {
		return []float32{}, free
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), n), free
}
