//go:build windows

package flock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// TryLock takes an exclusive LockFileEx lock on f without waiting. held
// is true when another open handle holds it (this process's or
// another's); err is any other failure. Closing f releases the lock.
// Unlike flock(2), a Windows lock is mandatory for the range it covers,
// so it covers one byte far beyond any content (offset 2^62, which
// Windows allows): what the file holds, a holder's pid, stays readable.
func TryLock(f *os.File) (held bool, err error) {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return false, nil
}

// lockOffsetHigh is the high 32 bits of the locked byte's offset (2^62).
const lockOffsetHigh = 1 << 30
