//go:build unix && !linux

package skills

import (
	"strings"
	"syscall"
)

// openPath opens a NUL-terminated path.
func openPath(pathZ string, flags int) (int, error) {
	return syscall.Open(strings.TrimSuffix(pathZ, "\x00"), flags, 0)
}
