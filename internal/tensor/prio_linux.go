package tensor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// threadID is the calling thread's kernel id.
func threadID() int { return unix.Gettid() }

// lowerThreadPriority raises the calling thread's nice value by delta (on
// Linux, PRIO_PROCESS with a thread id acts on that thread alone) and
// returns the new nice value. The caller must be locked to its thread.
func lowerThreadPriority(delta int) (int, error) {
	tid := unix.Gettid()
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return 0, fmt.Errorf("tensor: getpriority: %w", err)
	}
	nice := min(20-prio+delta, 19) // the system call returns 20 − nice
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil {
		return 0, fmt.Errorf("tensor: setpriority(nice %d): %w", nice, err)
	}
	return nice, nil
}

// osYield gives the CPU to another runnable thread, if any (sched_yield).
func osYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
