//go:build !unix

package gitsync

import "os"

// loadIndexFile returns the content of the pack index at path, read
// onto the heap: a mapped file could not be deleted (a repack drops
// packs) while it is mapped here.
func loadIndexFile(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, nil, err
}
