//go:build windows

package gitsync

import (
	"io/fs"
	"os"
)

// syncDir cannot make a directory's entries durable on Windows: there is
// no fsync of a directory (FlushFileBuffers needs a handle opened for
// writing, which a directory cannot be). NTFS journals its metadata, so a
// rename or a new entry survives a crash once the journal is flushed,
// which replace.File asks for (MOVEFILE_WRITE_THROUGH); file contents are
// still synced (os.File.Sync is FlushFileBuffers). It checks only that
// dir exists, as the unix syncDir's open does.
func syncDir(dir string) error {
	_, err := os.Stat(dir)
	return err
}

// openFile is os.OpenFile (the unix one saves system calls).
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// readSmallFile is os.ReadFile (the unix one saves system calls).
func readSmallFile(name string) ([]byte, error) {
	return os.ReadFile(name)
}

// renameFile is os.Rename (the unix one saves a system call).
func renameFile(oldpath, newpath string) error {
	return os.Rename(oldpath, newpath)
}
