//go:build windows

package workspace

import "io/fs"

// openFlags are the flags Open adds to O_RDONLY. Windows has neither
// O_NOFOLLOW nor FIFOs in a file system: the lstat of every component
// before the open (isLink refuses any reparse point) and the SameFile
// check after it are what refuse a link swapped in between.
const openFlags = 0

// isLink reports whether fi, from an lstat, is a link the readers refuse.
// On Windows every name-surrogate reparse point is one: a symbolic link
// (fs.ModeSymlink) and a junction or mount point, which Go reports as
// fs.ModeIrregular since Go 1.23. Other reparse points (cloud files) are
// irregular too, and refused the same way; deduplicated files read as
// regular files.
func isLink(fi fs.FileInfo) bool {
	return fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0
}
