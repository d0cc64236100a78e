//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the process's CPU time (user + system, all threads), for
// benchmarks: on a machine shared with other work it does not count
// waiting for a core.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
