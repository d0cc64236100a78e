//go:build unix

package gitsync

import (
	"os/exec"
	"syscall"
	"time"
)

// ownProcessGroup starts cmd in a process group of its own, so that a
// kill can take its git children with it.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killProcessGroup kills the process group pid leads.
func killProcessGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

// killProcess sends SIGKILL to pid (a group when negative), as kill -9.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// makeFIFO makes a FIFO at p, mode 0600.
func makeFIFO(p string) error { return syscall.Mkfifo(p, 0o600) }

// cpuTimes returns the CPU (user and system) of this process and of its
// waited-for descendants.
func cpuTimes() (self, children time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return self, children
}
