package constraint

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time of the calling OS thread (the caller locks
// its goroutine to the thread) from CLOCK_THREAD_CPUTIME_ID, in
// nanoseconds: unlike wall time, it does not grow when other processes
// share the CPUs.
func threadCPU() (time.Duration, bool) {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
