//go:build unix

package memstore

import (
	"os"
	"syscall"
)

// canMap: vector arenas map their files here.
const canMap = true

// mapReadOnly maps n bytes of f from offset off, shared and read-only:
// what is written to f there shows through.
func mapReadOnly(f *os.File, off int64, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(m []byte) { syscall.Munmap(m) }
