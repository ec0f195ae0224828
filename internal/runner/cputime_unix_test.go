//go:build unix

package runner_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system CPU time: a cost measure that
// holds up on a machine shared with other work, unlike wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
