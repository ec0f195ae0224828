package sampling

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread (the caller must
// have locked its goroutine to the thread). Benchmarks report it next to wall
// time because it does not grow when other processes share the CPUs.
func threadCPU() (time.Duration, bool) {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
