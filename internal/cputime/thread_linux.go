package cputime

import (
	"syscall"
	"time"
)

// Thread returns the CPU time of the calling OS thread; the caller must
// have locked its goroutine to the thread. ok is false where it cannot be
// read.
func Thread() (d time.Duration, ok bool) {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
