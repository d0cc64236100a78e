//go:build linux

package workspace

import (
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openFast opens name the short way: lstat the path, open it with
// openat2(RESOLVE_NO_SYMLINKS), which refuses a link anywhere on the way,
// and check that what was opened is what lstat saw: five system calls
// for a regular file, where os.Root's component-by-component walk takes
// dozens. A regular file comes back as a *rawFile, a directory as an
// *os.File. ok is false (and nothing stays open) for anything else — a
// link, a special file, a missing file, a kernel without openat2, a
// root that is itself reached through a link — and Open's checks then
// decide, and name the problem. Like them, it never opens what lstat
// shows is not a regular file or a directory.
func (d *Dir) openFast(name string) (fs.File, bool) {
	if d.name == "" || d.noFast.Load() {
		return nil, false
	}
	full := d.name + "/" + name
	var before syscall.Stat_t
	if err := syscall.Lstat(full, &before); err != nil {
		return nil, false
	}
	typ := before.Mode & syscall.S_IFMT
	if typ != syscall.S_IFREG && typ != syscall.S_IFDIR {
		return nil, false
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK, Resolve: unix.RESOLVE_NO_SYMLINKS}
	var fd int
	var err error
	for {
		fd, err = unix.Openat2(unix.AT_FDCWD, full, &how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if err == unix.ENOSYS || err == unix.EPERM { // no openat2 here (old kernel, seccomp)
			d.noFast.Store(true)
		}
		return nil, false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Dev != before.Dev || st.Ino != before.Ino || st.Mode&syscall.S_IFMT != typ {
		syscall.Close(fd)
		return nil, false
	}
	if typ == syscall.S_IFDIR {
		return os.NewFile(uintptr(fd), full), true // entries' Info lstats the path
	}
	return &rawFile{fd: fd, name: name, st: st}, true
}

// rawFile is a regular file opened by openFast: reads are plain read
// system calls, with none of the poller set-up os.File does (four fcntl
// and an epoll_ctl per open). It is not safe for concurrent use, and
// unlike an os.File it has no finalizer: a file never closed keeps its
// descriptor (every reader of a Dir closes what it opens).
type rawFile struct {
	fd   int
	name string
	st   syscall.Stat_t
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	if f.fd < 0 {
		return nil, &fs.PathError{Op: "stat", Path: f.name, Err: fs.ErrClosed}
	}
	return &rawInfo{name: path.Base(f.name), st: f.st}, nil
}

func (f *rawFile) Read(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrClosed}
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// rawInfo describes a regular file as os.Lstat would.
type rawInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *rawInfo) Name() string { return i.name }
func (i *rawInfo) Size() int64  { return i.st.Size }
func (i *rawInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
func (i *rawInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *rawInfo) IsDir() bool        { return false }
func (i *rawInfo) Sys() any           { return &i.st }
