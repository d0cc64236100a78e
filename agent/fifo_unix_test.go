//go:build unix

package agent_test

import "syscall"

// makeFIFO makes a FIFO at p.
func makeFIFO(p string) error { return syscall.Mkfifo(p, 0o644) }
