//go:build windows

package gitsync

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// syncDir cannot make a directory's entries durable on Windows: there is
// no fsync of a directory (FlushFileBuffers needs a handle opened for
// writing, which a directory cannot be). NTFS journals its metadata, so a
// rename or a new entry survives a crash once the journal is flushed,
// which replaceFile asks for (MOVEFILE_WRITE_THROUGH); file contents are
// still synced (os.File.Sync is FlushFileBuffers). It checks only that
// dir exists, as the unix syncDir's open does.
func syncDir(dir string) error {
	_, err := os.Stat(dir)
	return err
}

// replaceFile renames oldpath over newpath with MOVEFILE_REPLACE_EXISTING
// and MOVEFILE_WRITE_THROUGH. Windows refuses to replace a file another
// handle holds open without FILE_SHARE_DELETE (every os.Open: a reader
// of a ref for a moment), where unix lets the reader keep the old file:
// such a refusal is retried for up to replaceWait before it is returned.
func replaceFile(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	deadline, wait := time.Now().Add(replaceWait), time.Millisecond
	for {
		err = windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		busy := errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
		if !busy || time.Now().After(deadline) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		time.Sleep(wait)
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// replaceWait bounds how long replaceFile retries a file held open.
const replaceWait = 2 * time.Second
