package tensor

import (
	"syscall"
	"unsafe"
)

// madvCollapse is Linux's MADV_COLLAPSE (6.1+): back a populated range with
// transparent huge pages now, copying its pages.
const madvCollapse = 25

// adviseHuge backs the 2 MB pages lying wholly inside b with transparent
// huge pages (MADV_HUGEPAGE, then MADV_COLLAPSE) and returns the bytes the
// kernel so backed (0 if it refused). The contents do not change.
func adviseHuge(b []byte) int {
	const huge = 2 << 20
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((huge - p%huge) % huge)
	n := (len(b) - off) &^ (huge - 1)
	if off >= len(b) || n <= 0 {
		return 0
	}
	r := b[off : off+n]
	if syscall.Madvise(r, syscall.MADV_HUGEPAGE) != nil || syscall.Madvise(r, madvCollapse) != nil {
		return 0
	}
	return n
}
