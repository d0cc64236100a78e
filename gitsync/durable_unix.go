//go:build unix

package gitsync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// syncDir makes a directory's entries (a rename, a new file) durable:
// fsync of the directory itself.
func syncDir(dir string) error {
	fd, err := openFD(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := fsyncFD(fd); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// openFile opens name as os.OpenFile does, without offering the file to
// the runtime's poller: os.OpenFile does, and for a regular file or a
// directory that is four fcntl calls and an epoll_ctl that fails, five
// system calls wasted on each of the files a commit opens.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := openFD(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openFD opens name close-on-exec, errors as os.OpenFile's.
func openFD(name string, flag int, perm fs.FileMode) (int, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return -1, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// fsyncFD syncs the open file fd.
func fsyncFD(fd int) error {
	for {
		err := syscall.Fsync(fd)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// readSmallFile is os.ReadFile for a file of a few bytes (a ref): open,
// read to the end, close, without os.ReadFile's fstat and os.Open's
// poller calls.
func readSmallFile(name string) ([]byte, error) {
	fd, err := openFD(name, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 128)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// renameFile renames a file over another as os.Rename does, without its
// check (an lstat) that newpath is not a directory: callers rename to
// names of files only.
func renameFile(oldpath, newpath string) error {
	for {
		err := syscall.Rename(oldpath, newpath)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
	}
}
