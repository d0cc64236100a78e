// Package mapfile owns reading a file that is never rewritten in place
// (a new version is renamed over it) into memory: mapped read-only where
// the system allows it and the file is large enough to be worth a
// mapping, read onto the heap otherwise. On Windows a file is always
// read: a mapped file could not be deleted or replaced while mapped.
//
// It imports nothing of Quire's.
package mapfile

// Read returns the content of the file at path and a function that
// unmaps it, nil when the content was read onto the heap: a file of at
// least min bytes is mapped on unix (min below 1 counts as 1: an empty
// file is read).
func Read(path string, min int64) (data []byte, unmap func(), err error) {
	return read(path, max(min, 1))
}
