//go:build linux

package daemon

import (
	"io/fs"
	"syscall"
	"time"
)

// statOf reads a file's change time and inode from its stat data.
func statOf(info fs.FileInfo) fileStat {
	st := fileStat{mtime: info.ModTime(), ctime: info.ModTime()}
	if s, ok := info.Sys().(*syscall.Stat_t); ok {
		sec, nsec := s.Ctim.Unix()
		st.ctime = time.Unix(sec, nsec)
		st.ino, st.dev = uint64(s.Ino), uint64(s.Dev)
	}
	return st
}
