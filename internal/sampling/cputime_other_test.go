//go:build !linux

package sampling

import "time"

// threadCPU is unavailable off Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
