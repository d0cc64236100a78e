//go:build unix

package skills

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"

	"github.com/quirehq/quire/workspace"
)

// readDiskFile reads the file at an absolute path, given with a trailing
// NUL (diskFileZ), into buf (grown as needed) with three system calls,
// open, read and close, where os.Open, Stat, Read and Close take about
// seven: loading a tier of many skills is mostly system calls. A file
// over MaxSkillBytes gives errTooLarge; a missing one an error that is
// fs.ErrNotExist. With noLinks, a file that is a symbolic link is not
// followed: it gives workspace.ErrSymlink.
func readDiskFile(pathZ string, buf []byte, noLinks bool) ([]byte, error) {
	path := strings.TrimSuffix(pathZ, "\x00")
	if len(path) == len(pathZ) || strings.IndexByte(path, 0) >= 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EINVAL}
	}
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if noLinks {
		flags |= syscall.O_NOFOLLOW
	}
	var fd int
	var err error
	for {
		// O_NONBLOCK: a FIFO put where a SKILL.md should be opens at once
		// (and reads as nothing) instead of hanging the load.
		fd, err = openPath(pathZ, flags)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if err == syscall.ENOENT || err == syscall.ENOTDIR {
			return nil, fs.ErrNotExist
		}
		if noLinks && err == syscall.ELOOP {
			return nil, &fs.PathError{Op: "open", Path: path, Err: workspace.ErrSymlink}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	out := buf[:0]
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		n, err := syscall.Read(fd, out[len(out):cap(out)])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EISDIR {
			return nil, errors.New(workspace.SkillFile + " is a directory")
		}
		if err == syscall.EAGAIN {
			return nil, errors.New(workspace.SkillFile + " is not a regular file")
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return out, nil
		}
		out = out[:len(out)+n]
		if len(out) > MaxSkillBytes {
			return nil, errTooLarge
		}
		if len(out) < cap(out) {
			// A short read of a regular file is its end (a file still
			// being written is read again by the watcher once it is).
			return out, nil
		}
	}
}

const haveDiskRead = true
