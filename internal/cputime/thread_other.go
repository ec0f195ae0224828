//go:build !linux

package cputime

import "time"

// Thread is unavailable off Linux.
func Thread() (time.Duration, bool) { return 0, false }
