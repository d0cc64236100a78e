//go:build unix

package workspace

import (
	"syscall"
	"testing"
)

// makeFIFO makes a FIFO at p; it reports whether the system has them.
func makeFIFO(tb testing.TB, p string) bool {
	tb.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		tb.Fatal(err)
	}
	return true
}
