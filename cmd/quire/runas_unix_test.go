//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// runAsUser makes cmd run as uid and gid (the caller is root).
func runAsUser(cmd *exec.Cmd, uid, gid uint32) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
}
