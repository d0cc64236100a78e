//go:build linux

package daemon

import (
	"io/fs"
	"syscall"
	"time"

	"github.com/quirehq/quire/workspace"
)

// statOf reads a file's change time and inode from its stat data.
func statOf(info fs.FileInfo) fileStat {
	if s, ok := info.Sys().(*syscall.Stat_t); ok {
		return statOfSys(s)
	}
	return fileStat{mtime: info.ModTime(), ctime: info.ModTime()}
}

// statOfSys is statOf of the kernel's stat data.
func statOfSys(s *syscall.Stat_t) fileStat {
	return fileStat{mtime: time.Unix(s.Mtim.Unix()), ctime: time.Unix(s.Ctim.Unix()), ino: uint64(s.Ino), dev: uint64(s.Dev)}
}

// lstatEntry is file p's stat data and size, as e.Info() gives them. In
// a workspace.Dir it asks the kernel directly: no FileInfo (a fleet's
// scan stats tens of thousands of files).
func lstatEntry(fsys fs.FS, p string, e fs.DirEntry) (fileStat, int64, error) {
	d, ok := fsys.(*workspace.Dir)
	if !ok || d.Name() == "" {
		return infoStat(e)
	}
	full := d.Name() + "/" + p
	var s syscall.Stat_t
	for {
		err := syscall.Lstat(full, &s)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fileStat{}, 0, &fs.PathError{Op: "lstat", Path: full, Err: err}
		}
		break
	}
	return statOfSys(&s), s.Size, nil
}
