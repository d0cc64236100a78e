//go:build unix

package gitsync

import (
	"io"
	"os"
	"syscall"
)

// mapMin is the size from which a pack index is mapped rather than
// read: a smaller one (a commit's own pack indexes a handful of
// objects) would take a page of its own and a mapping for a few hundred
// bytes.
const mapMin = 64 << 10

// loadIndexFile returns the content of the pack index at path, mapped
// read-only when it is large (git never rewrites an index in place: a
// new one is renamed over it), and a function that unmaps it (nil when
// the content was read onto the heap).
func loadIndexFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size < mapMin || size != int64(int(size)) {
		b := make([]byte, size)
		_, err := io.ReadFull(f, b)
		return b, nil, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}
