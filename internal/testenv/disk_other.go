//go:build !linux

package testenv

import "testing"

// SmallDisk skips the test: a small file system is mounted on Linux only.
func SmallDisk(t testing.TB, size int) string {
	t.Skip("a small file system is mounted on Linux only")
	return ""
}

// Fill is not reached: SmallDisk skipped the test.
func Fill(t testing.TB, dir string) string {
	t.Skip("a small file system is mounted on Linux only")
	return ""
}
