//go:build !linux

package daemon

import "io/fs"

// statOf is the modification time alone where there is no change time
// or inode to read.
func statOf(info fs.FileInfo) fileStat {
	return fileStat{mtime: info.ModTime(), ctime: info.ModTime()}
}

// lstatEntry is file p's stat data and size, as e.Info() gives them.
func lstatEntry(_ fs.FS, _ string, e fs.DirEntry) (fileStat, int64, error) {
	return infoStat(e)
}
