//go:build unix

package gitsync

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// killGroupOnCancel makes cmd's cancellation kill the process group it
// starts: git push and fetch run helpers (git-remote-http) that would
// otherwise outlive git, holding the connection and git's output open,
// so that a fetch or push cut at its deadline would not return then.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// peakRSS is the peak resident memory of an ended process, in bytes
// (getrusage's ru_maxrss: bytes on macOS, KiB elsewhere); 0 when unknown.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
