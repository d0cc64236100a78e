//go:build windows

package gitsync

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// ownProcessGroup leaves cmd as it is: Windows has no process groups to
// kill at once (a killed process's git children end when their pipes
// close).
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the process pid.
func killProcessGroup(pid int) { _ = killProcess(pid) }

// killProcess terminates the process |pid| (there are no groups to kill).
func killProcess(pid int) error {
	p, err := os.FindProcess(max(pid, -pid))
	if err != nil {
		return err
	}
	return p.Kill()
}

// makeFIFO fails: Windows file systems have no FIFOs.
func makeFIFO(string) error { return errors.ErrUnsupported }

// cpuTimes is not measured here (no getrusage): benchmarks report 0.
func cpuTimes() (self, children time.Duration) { return 0, 0 }
