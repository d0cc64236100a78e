//go:build unix

package gitsync

import (
	"os/exec"
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
