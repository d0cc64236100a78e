//go:build !windows

package replace

import "os"

// File renames oldpath over newpath, atomically: readers that opened the
// old file keep reading it.
func File(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
