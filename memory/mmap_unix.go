//go:build unix

package memory

import (
	"os"
	"syscall"
)

// mapFile maps file read-only into memory; release unmaps it.
func mapFile(file string) ([]byte, func(), error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 || st.Size() != int64(int(st.Size())) {
		return nil, nil, os.ErrInvalid
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { syscall.Munmap(data) }, nil
}
