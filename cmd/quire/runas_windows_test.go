//go:build windows

package main

import "os/exec"

// runAsUser leaves cmd as it is: Windows has no uid to switch to (the
// tests that need another user do not run there: os.Getuid is -1).
func runAsUser(*exec.Cmd, uint32, uint32) {}
