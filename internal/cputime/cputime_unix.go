//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the process's user + system CPU time (0 if unavailable).
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
