//go:build !linux

package tensor

// adviseHuge returns 0: huge pages are asked for on Linux only.
func adviseHuge(b []byte) int { return 0 }
