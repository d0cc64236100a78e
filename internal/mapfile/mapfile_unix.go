//go:build unix

package mapfile

import (
	"io"
	"os"
	"syscall"
)

func read(path string, min int64) ([]byte, func(), error) {
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
	if size < min || size != int64(int(size)) {
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
