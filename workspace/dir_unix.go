//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// openFlags are the flags Open adds to O_RDONLY: never follow a link in
// the last component (the os.Root walk already refuses one on the way),
// and never block on a FIFO swapped in after the lstat.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLink reports whether fi, from an lstat, is a link the readers refuse:
// a symbolic link.
func isLink(fi fs.FileInfo) bool { return fi.Mode()&fs.ModeSymlink != 0 }
