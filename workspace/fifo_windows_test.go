//go:build windows

package workspace

import "testing"

// makeFIFO reports that Windows has no FIFOs in a file system: the cases
// that need one are left out there.
func makeFIFO(tb testing.TB, p string) bool {
	tb.Helper()
	tb.Logf("no FIFO at %s: Windows file systems have none", p)
	return false
}
