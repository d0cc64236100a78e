package gitsync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// ErrDiskFull is matched by a *DiskFullError.
var ErrDiskFull = errors.New("no space left on device")

// DiskFullError is a write that failed because its file system is full,
// or the owner's quota used up (ENOSPC, EDQUOT).
type DiskFullError struct {
	// Path is the file or directory that was being written.
	Path string
	// Err is syscall.ENOSPC or syscall.EDQUOT.
	Err error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("%v writing %s: free space on its file system, then retry", e.Err, e.Path)
}

// Is makes a DiskFullError match ErrDiskFull.
func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

func (e *DiskFullError) Unwrap() error { return e.Err }

// DiskFull returns the *DiskFullError in err's chain or, when err holds
// an ENOSPC or EDQUOT, one naming the path of the *fs.PathError or
// *os.LinkError that carries it; nil when err is not about space.
func DiskFull(err error) *DiskFullError {
	var df *DiskFullError
	if errors.As(err, &df) {
		return df
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.ENOSPC && errno != syscall.EDQUOT {
		return nil
	}
	df = &DiskFullError{Err: errno}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		df.Path = pe.Path
	case errors.As(err, &le):
		df.Path = le.New
	}
	return df
}

// gitDiskFull is what git said when it failed for want of space (it
// words ENOSPC so: "… No space left on device", "… write error. Out of
// diskspace", "… Disk quota exceeded"), as a *DiskFullError naming
// path; nil for any other failure.
func gitDiskFull(stderr, path string) *DiskFullError {
	switch {
	case strings.Contains(stderr, "No space left on device"), strings.Contains(stderr, "Out of diskspace"):
		return &DiskFullError{Path: path, Err: syscall.ENOSPC}
	case strings.Contains(stderr, "Disk quota exceeded"):
		return &DiskFullError{Path: path, Err: syscall.EDQUOT}
	}
	return nil
}
