package tensor

import "unsafe"

// HugePages backs w's weights (its packed layout, else its blocks or rows;
// every part of a Stacked matrix) with transparent huge pages where the OS
// allows it (Linux with transparent_hugepage "madvise" or "always"): the 2
// MB pages lying wholly inside each buffer. Decode streams every weight
// once per token, and in 4 KB pages that is a TLB miss every 4 KB of the
// stream. It returns the bytes so backed; the values do not change.
func HugePages(w *Mat) int {
	n := 0
	for i := range w.Parts {
		n += HugePages(&w.Parts[i])
	}
	for _, b := range [][]byte{w.P, w.Q, f32Bytes(w.P32), f32Bytes(w.F32)} {
		if len(b) > 0 {
			n += adviseHuge(b)
		}
	}
	return n
}

// f32Bytes is the memory of f as bytes.
func f32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}
