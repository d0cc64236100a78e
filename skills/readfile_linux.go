//go:build linux

package skills

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openPath opens a NUL-terminated path: openat(AT_FDCWD, pathZ, flags)
// as it is, without the copy syscall.Open makes to add the NUL.
func openPath(pathZ string, flags int) (int, error) {
	fdcwd := unix.AT_FDCWD
	fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(fdcwd), uintptr(unsafe.Pointer(unsafe.StringData(pathZ))), uintptr(flags), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}
