//go:build linux

package workspace

import (
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openFast opens name the short way: lstat the path, open it with
// openat2(RESOLVE_NO_SYMLINKS), which refuses a link anywhere on the way,
// and check that what was opened is what lstat saw: five system calls
// for a regular file, where os.Root's component-by-component walk takes
// dozens. A regular file comes back as a *rawFile, a directory as a
// *rawDir. ok is false (and nothing stays open) for anything else — a
// link, a special file, a missing file, a kernel without openat2, a
// root that is itself reached through a link — and Open's checks then
// decide, and name the problem. Like them, it never opens what lstat
// shows is not a regular file or a directory.
func (d *Dir) openFast(name string) (fs.File, bool) {
	if d.name == "" || d.noFast.Load() {
		return nil, false
	}
	full := d.path(name)
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
		return &rawDir{rawFile: rawFile{fd: fd, rawInfo: rawInfo{name: name, st: st}}, full: full}, true
	}
	return &rawFile{fd: fd, rawInfo: rawInfo{name: name, st: st}}, true
}

// openListed opens name, which e from this Dir's listing shows is a
// regular file, with openat2 and fstat: the listing did what lstat does
// in openFast (a file swapped since is refused after the open, as in
// Open's checks).
func (d *Dir) openListed(name string, e fs.DirEntry) (fs.File, bool) {
	re, ok := e.(*rawEntry)
	if !ok || re.typ != 0 || d.name == "" || d.noFast.Load() {
		return nil, false
	}
	full := d.path(name)
	if rest, ok := strings.CutPrefix(full, re.dir); !ok || len(rest) != len(re.name)+1 || rest[0] != '/' || rest[1:] != re.name {
		return nil, false // not this file's entry
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY, Resolve: unix.RESOLVE_NO_SYMLINKS}
	var fd int
	var err error
	for {
		fd, err = unix.Openat2(unix.AT_FDCWD, full, &how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, false
	}
	return &rawFile{fd: fd, rawInfo: rawInfo{name: name, st: st}}, true
}

// readListed is ReadListed's Linux way: openat2 of a NUL-terminated path
// built on the stack, fstat, read and close, with no file object and no
// path string.
func (d *Dir) readListed(name string, e fs.DirEntry, max int64) ([]byte, bool) {
	re, ok := e.(*rawEntry)
	if !ok || re.typ != 0 || d.name == "" || d.noFast.Load() || name == "." {
		return nil, false
	}
	var stack [512]byte
	n := len(d.name) + 1 + len(name)
	if n+1 > len(stack) || n != len(re.dir)+1+len(re.name) {
		return nil, false
	}
	full := stack[:n+1]
	copy(full, d.name)
	full[len(d.name)] = '/'
	copy(full[len(d.name)+1:], name)
	full[n] = 0
	// Not this file's entry: OpenListed decides.
	if string(full[:len(re.dir)]) != re.dir || full[len(re.dir)] != '/' || string(full[len(re.dir)+1:n]) != re.name {
		return nil, false
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fdcwd := unix.AT_FDCWD
	var fd int
	for {
		r, _, errno := syscall.Syscall6(unix.SYS_OPENAT2, uintptr(fdcwd), uintptr(unsafe.Pointer(&full[0])), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return nil, false
		}
		fd = int(r)
		break
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size <= 0 || st.Size > max {
		return nil, false
	}
	// A regular file holds what fstat said when it was opened: read that
	// much, without a read to see the end (a file that shrank since is
	// what is there).
	buf := make([]byte, st.Size)
	got := 0
	for got < len(buf) {
		m, err := syscall.Read(fd, buf[got:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		got += m
	}
	return buf[:got], true
}

// readDirFast lists directory name, sorted by name, with
// openat2(O_DIRECTORY, RESOLVE_NO_SYMLINKS), getdents64 and close: O_DIRECTORY refuses
// anything but a directory before it is opened, so no lstat is needed
// first. A missing directory is an error that is fs.ErrNotExist (no link
// was met on the way: openat2 refuses one before it looks further). ok
// is false when ReadDir's checks must decide.
func (d *Dir) readDirFast(name string) (es []fs.DirEntry, ok bool, err error) {
	if d.name == "" || d.noFast.Load() {
		return nil, false, nil
	}
	fullZ := d.pathZ(name)
	full := fullZ[:len(fullZ)-1]
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_DIRECTORY, Resolve: unix.RESOLVE_NO_SYMLINKS}
	var fd int
	for {
		fd, err = openat2Z(fullZ, &how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		switch {
		case err == unix.ENOENT && name != ".":
			return nil, true, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
		case err == unix.ENOSYS || err == unix.EPERM:
			d.noFast.Store(true)
		}
		return nil, false, nil
	}
	dir := &rawDir{rawFile: rawFile{fd: fd, rawInfo: rawInfo{name: name}}, full: full}
	es, err = dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return nil, false, nil
	}
	// Sorted by name as ReadDir promises, comparing the entries' names
	// directly rather than through fs.DirEntry's method.
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.(*rawEntry).name, b.(*rawEntry).name) })
	return es, true, nil
}

// rawFile is a regular file opened by openFast: reads are plain read
// system calls, with none of the poller set-up os.File does (four fcntl
// and an epoll_ctl per open). It is not safe for concurrent use, and
// unlike an os.File it has no finalizer: a file never closed keeps its
// descriptor (every reader of a Dir closes what it opens).
type rawFile struct {
	fd int
	rawInfo
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	if f.fd < 0 {
		return nil, &fs.PathError{Op: "stat", Path: f.name, Err: fs.ErrClosed}
	}
	return &f.rawInfo, nil
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

// rawDir is a directory opened by openFast, listed with getdents64.
type rawDir struct {
	rawFile
	full  string     // its path, for entries' Info
	buf   []byte     // getdents64 output not yet parsed is buf[off:]
	names string     // buf as a string: the entries' names are cut from it
	slab  []rawEntry // the batch's entries
	off   int
	eof   bool
}

func (d *rawDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: syscall.EISDIR}
}

// ReadDir lists entries in directory order, as os.File.ReadDir does.
func (d *rawDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.fd < 0 {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	var out []fs.DirEntry
	for n <= 0 || len(out) < n {
		if d.off >= len(d.buf) {
			if d.eof {
				break
			}
			if d.buf == nil {
				d.buf = *direntBufs.Get().(*[]byte)
			}
			m, err := syscall.ReadDirent(d.fd, d.buf[:cap(d.buf)])
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return out, &fs.PathError{Op: "readdirent", Path: d.name, Err: err}
			}
			d.buf, d.off = d.buf[:m], 0
			if m == 0 {
				d.eof = true
				break
			}
			// One string holds the batch's names and one slice its
			// entries (a record takes at least 24 bytes).
			d.names, d.slab = string(d.buf), make([]rawEntry, 0, m/24+1)
			if out == nil {
				out = make([]fs.DirEntry, 0, m/24+1)
			}
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		rec := d.buf[d.off:]
		if len(rec) < 19 {
			d.off = len(d.buf)
			continue
		}
		reclen := int(binary.NativeEndian.Uint16(rec[16:]))
		if reclen < 19 || reclen > len(rec) {
			d.off = len(d.buf)
			continue
		}
		ino, typ, name := binary.NativeEndian.Uint64(rec), rec[18], d.names[d.off+19:d.off+reclen]
		d.off += reclen
		if i := strings.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if ino == 0 || name == "." || name == ".." {
			continue
		}
		d.slab = append(d.slab, rawEntry{dir: d.full, name: name})
		e := &d.slab[len(d.slab)-1]
		switch typ {
		case syscall.DT_REG:
		case syscall.DT_DIR:
			e.typ = fs.ModeDir
		case syscall.DT_LNK:
			e.typ = fs.ModeSymlink
		case syscall.DT_FIFO:
			e.typ = fs.ModeNamedPipe
		case syscall.DT_SOCK:
			e.typ = fs.ModeSocket
		case syscall.DT_CHR:
			e.typ = fs.ModeDevice | fs.ModeCharDevice
		case syscall.DT_BLK:
			e.typ = fs.ModeDevice
		default: // the file system does not say: ask
			info, err := e.Info()
			if err != nil {
				continue // gone since it was listed
			}
			e.typ = info.Mode().Type()
		}
		out = append(out, e)
	}
	if n > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// Close closes the directory and gives its buffer back.
func (d *rawDir) Close() error {
	if d.buf != nil && d.fd >= 0 {
		buf := d.buf[:cap(d.buf)]
		d.buf = nil
		direntBufs.Put(&buf)
	}
	return d.rawFile.Close()
}

// direntBufs holds getdents64 buffers: listing a directory allocates
// only its entries (the names are copied out).
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// rawEntry is an entry a rawDir lists.
type rawEntry struct {
	dir, name string
	typ       fs.FileMode
}

func (e *rawEntry) Name() string               { return e.name }
func (e *rawEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *rawEntry) Type() fs.FileMode          { return e.typ }
func (e *rawEntry) Info() (fs.FileInfo, error) { return os.Lstat(e.dir + "/" + e.name) }
func (e *rawEntry) String() string             { return fs.FormatDirEntry(e) }

// rawInfo describes a regular file or a directory as os.Lstat would.
type rawInfo struct {
	name string // the slash path Open was given
	st   syscall.Stat_t
}

func (i *rawInfo) Name() string { return path.Base(i.name) }
func (i *rawInfo) Size() int64  { return i.st.Size }
func (i *rawInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	if i.IsDir() {
		m |= fs.ModeDir
	}
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
func (i *rawInfo) IsDir() bool        { return i.st.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (i *rawInfo) Sys() any           { return &i.st }

// pathZ is d.path(name) with a NUL after it, for openat2Z: one string
// for both.
func (d *Dir) pathZ(name string) string {
	if name == "." {
		return d.name + "\x00"
	}
	return d.name + "/" + name + "\x00"
}

// openat2Z is unix.Openat2(AT_FDCWD, …) of a path that ends in a NUL
// (and holds no other), passed to the kernel as it is: no copy.
func openat2Z(pathZ string, how *unix.OpenHow) (int, error) {
	if len(pathZ) == 0 || pathZ[len(pathZ)-1] != 0 || strings.IndexByte(pathZ[:len(pathZ)-1], 0) >= 0 {
		return -1, unix.EINVAL
	}
	fdcwd := unix.AT_FDCWD
	r, _, errno := syscall.Syscall6(unix.SYS_OPENAT2, uintptr(fdcwd), uintptr(unsafe.Pointer(unsafe.StringData(pathZ))), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// path is name's path on disk: the root is d.name itself.
func (d *Dir) path(name string) string {
	if name == "." {
		return d.name
	}
	return d.name + "/" + name
}
