//go:build !unix

package gitsync

import "os/exec"

// killGroupOnCancel leaves cmd's cancellation as it is: killing git
// alone (its helpers end when their pipes close).
func killGroupOnCancel(*exec.Cmd) {}
