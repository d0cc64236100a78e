//go:build windows

package replace

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// File renames oldpath over newpath with MOVEFILE_REPLACE_EXISTING and
// MOVEFILE_WRITE_THROUGH. Windows refuses to replace a file another
// handle holds open without FILE_SHARE_DELETE (every os.Open: a reader
// for a moment), where unix lets the reader keep the old file: such a
// refusal is retried for up to wait before it is returned.
func File(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	deadline, pause := time.Now().Add(wait), time.Millisecond
	for {
		err = windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		busy := errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
		if !busy || time.Now().After(deadline) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}

// wait bounds how long File retries a destination held open.
const wait = 2 * time.Second
