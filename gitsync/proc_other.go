//go:build !unix

package gitsync

import (
	"os"
	"os/exec"
)

// killGroupOnCancel leaves cmd's cancellation as it is: killing git
// alone (its helpers end when their pipes close).
func killGroupOnCancel(*exec.Cmd) {}

// peakRSS is unknown here (Windows has no getrusage): 0.
func peakRSS(*os.ProcessState) int64 { return 0 }
