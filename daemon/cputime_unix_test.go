//go:build unix

package daemon_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time (user + system, all threads): on a
// machine shared with other work it does not count waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
