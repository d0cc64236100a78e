package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// ErrSymlink is the error of a path that is (or passes through) a symbolic
// link: workspace reads never follow links.
var ErrSymlink = errors.New("is a symbolic link: links are not read; replace it with the file itself")

// ErrNotRegular is the error of a path that is neither a regular file nor
// a directory (a FIFO, a device, a socket).
var ErrNotRegular = errors.New("is not a regular file: only regular files are read")

// Dir is a working tree on disk as an fs.FS confined to its root. Open,
// Stat and ReadDir refuse symbolic links and special files (see ErrSymlink
// and ErrNotRegular); Stat reports a link as a link (it does not follow
// it), so walkers see what is there. Every operation opens the directory
// anew (like os.DirFS, a Dir names a path, and holds nothing open).
type Dir struct {
	name   string
	noFast atomic.Bool // openFast is unavailable (no openat2)
}

// DirFS is the working tree at dir.
func DirFS(dir string) *Dir { return &Dir{name: dir} }

// Name is the directory the Dir reads.
func (d *Dir) Name() string { return d.name }

func (d *Dir) openRoot(op, name string) (*os.Root, error) {
	r, err := os.OpenRoot(d.name)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("open workspace %s: %w", d.name, unwrapPath(err))}
	}
	return r, nil
}

// lstat checks every component of name: none may be a link, the last one
// must be a regular file or a directory. It returns the last one's info.
func (d *Dir) lstat(op, name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	r, err := d.openRoot(op, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return lstat(r, op, name)
}

func lstat(r *os.Root, op, name string) (fs.FileInfo, error) {
	if name == "." {
		return r.Lstat(".")
	}
	var fi fs.FileInfo
	for i := 0; ; {
		j := strings.IndexByte(name[i:], '/')
		prefix := name
		if j >= 0 {
			prefix = name[:i+j]
		}
		var err error
		if fi, err = r.Lstat(prefix); err != nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: unwrapPath(err)}
		}
		if isLink(fi) {
			return fi, &fs.PathError{Op: op, Path: prefix, Err: ErrSymlink}
		}
		if j < 0 {
			break
		}
		if !fi.IsDir() {
			return nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
		}
		i += j + 1
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return fi, &fs.PathError{Op: op, Path: name, Err: ErrNotRegular}
	}
	return fi, nil
}

// unwrapPath drops os.Root's own PathError so that ours names the path
// relative to the workspace.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Open opens a regular file or a directory. The file is opened without
// following a link and without blocking, and checked again once open, so
// a file swapped for a link or a FIFO between the check and the open is
// refused too.
func (d *Dir) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := d.openFast(name); ok {
		return f, nil
	}
	r, err := d.openRoot("open", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := lstat(r, "open", name)
	if err != nil {
		return nil, err
	}
	f, err := r.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
	}
	now, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
	}
	if !os.SameFile(fi, now) || now.Mode().Type() != fi.Mode().Type() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("changed while it was opened; try again")}
	}
	return f, nil
}

// OpenListed opens name, a regular file that e, an entry of this Dir's
// listing of name's directory, describes. It is Open without the lstat
// that precedes the open: the listing said what lstat would, and the file
// is checked once open, so one swapped for something else since is
// refused all the same. Any other entry makes it Open.
func (d *Dir) OpenListed(name string, e fs.DirEntry) (fs.File, error) {
	if fs.ValidPath(name) && e != nil {
		if f, ok := d.openListed(name, e); ok {
			return f, nil
		}
	}
	return d.Open(name)
}

// ReadListed reads the whole of name, a regular file that e, an entry of
// this Dir's listing of name's directory, describes, when it holds at
// most max bytes (and at least one). It is OpenListed, Stat, Read and
// Close in one, with the same checks: the file is opened without
// following a link and without blocking, and read only if it is a
// regular file once open. ok is false, and nothing was read, when the
// caller must open the file (OpenListed) to find out more: a larger or
// empty file, one that is no longer what the listing showed, an error,
// or a system other than Linux.
func (d *Dir) ReadListed(name string, e fs.DirEntry, max int64) (data []byte, ok bool) {
	if !fs.ValidPath(name) || e == nil {
		return nil, false
	}
	return d.readListed(name, e, max)
}

// Stat describes name without following a link: a link or a special file
// is reported as what it is, together with the error Open would return.
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	return d.lstat("stat", name)
}

// ReadDir lists a directory; its entries' types are what is on disk (a
// link is a link), and opening one goes through Open's checks.
func (d *Dir) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if es, ok, err := d.readDirFast(name); ok {
		if err != nil {
			return nil, err
		}
		return es, nil // sorted already
	}
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	es, err := rd.ReadDir(-1)
	sortEntries(es)
	return es, err
}

// Sub is the subtree dir, read with the same checks (a link on the way to
// it is refused too).
func (d *Dir) Sub(dir string) (fs.FS, error) {
	if dir == "." {
		return d, nil
	}
	fi, err := d.lstat("sub", dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: syscall.ENOTDIR}
	}
	return &subDir{d: d, prefix: dir}, nil
}

// subDir is a subtree of a Dir: every name is joined to prefix.
type subDir struct {
	d      *Dir
	prefix string
}

func (s *subDir) full(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return path.Join(s.prefix, name), nil
}

// relative names a PathError's path relative to the subtree again.
func (s *subDir) relative(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if rel, ok := strings.CutPrefix(pe.Path, s.prefix+"/"); ok {
			return &fs.PathError{Op: pe.Op, Path: rel, Err: pe.Err}
		}
		if pe.Path == s.prefix {
			return &fs.PathError{Op: pe.Op, Path: ".", Err: pe.Err}
		}
	}
	return err
}

func (s *subDir) Open(name string) (fs.File, error) {
	full, err := s.full("open", name)
	if err != nil {
		return nil, err
	}
	f, err := s.d.Open(full)
	return f, s.relative(err)
}

func (s *subDir) Stat(name string) (fs.FileInfo, error) {
	full, err := s.full("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := s.d.Stat(full)
	return fi, s.relative(err)
}

func (s *subDir) ReadDir(name string) ([]fs.DirEntry, error) {
	full, err := s.full("readdir", name)
	if err != nil {
		return nil, err
	}
	es, err := s.d.ReadDir(full)
	return es, s.relative(err)
}

func (s *subDir) Sub(dir string) (fs.FS, error) {
	full, err := s.full("sub", dir)
	if err != nil {
		return nil, err
	}
	sub, err := s.d.Sub(full)
	return sub, s.relative(err)
}

var (
	_ fs.StatFS    = (*Dir)(nil)
	_ fs.ReadDirFS = (*Dir)(nil)
	_ fs.SubFS     = (*Dir)(nil)
	_ fs.StatFS    = (*subDir)(nil)
	_ fs.ReadDirFS = (*subDir)(nil)
	_ fs.SubFS     = (*subDir)(nil)
)

func sortEntries(es []fs.DirEntry) {
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
