package daemon

import (
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/quirehq/quire/workspace"
)

// listedDir is a working tree whose build reads the directory listings
// the scan that named its revision took (scanTree), instead of listing
// every directory a second time: the agents found, their agent.yaml files
// read and their skill directories looked for are those of the files the
// content id names. Once the build is done (forget), it is the working
// tree on disk, as workspace.Dir reads it.
type listedDir struct {
	dir  *workspace.Dir
	dirs atomic.Pointer[map[string][]fs.DirEntry]
}

// newListedDir is dir with the listings of its scan.
func newListedDir(dir *workspace.Dir, listings map[string][]fs.DirEntry) *listedDir {
	l := &listedDir{dir: dir}
	l.dirs.Store(&listings)
	return l
}

// forget drops the listings: reads go to the disk from now on.
func (l *listedDir) forget() { l.dirs.Store(nil) }

// listing returns the listing of dir, if the scan took it.
func (l *listedDir) listing(dir string) ([]fs.DirEntry, bool) {
	m := l.dirs.Load()
	if m == nil {
		return nil, false
	}
	es, ok := (*m)[dir]
	return es, ok
}

// entry looks name up in its directory's listing, or finds that a
// directory above it is missing (e nil, known true): known is false when
// the listings cannot tell (a directory the scan did not enter, such as
// .git, or a name below a file).
func (l *listedDir) entry(name string) (e fs.DirEntry, known bool) {
	if name == "." || !fs.ValidPath(name) {
		return nil, false
	}
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	es, ok := l.listing(dir)
	if !ok {
		if d, known := l.entry(dir); known && d == nil {
			return nil, true // agents/a/.agents/skills when .agents is not there
		}
		return nil, false
	}
	i, found := sort.Find(len(es), func(i int) int { return strings.Compare(base, es[i].Name()) })
	if !found {
		return nil, true
	}
	return es[i], true
}

// notExist is the error workspace.Dir gives for a missing name.
func notExist(name string) error {
	return &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
}

// ReadDir implements fs.ReadDirFS: a copy of the scan's listing, an
// error for a directory its parent's listing does not hold.
func (l *listedDir) ReadDir(name string) ([]fs.DirEntry, error) {
	if es, ok := l.listing(name); ok {
		return slices.Clone(es), nil
	}
	if e, known := l.entry(name); known && e == nil {
		return nil, notExist(name)
	}
	return l.dir.ReadDir(name)
}

// ReadFile implements fs.ReadFileFS: a file the scan listed is read
// without looking it up first (workspace.Dir.ReadListed, with its
// checks), a file its directory's listing does not hold is missing.
func (l *listedDir) ReadFile(name string) ([]byte, error) {
	e, known := l.entry(name)
	switch {
	case known && e == nil:
		return nil, notExist(name)
	case e != nil && e.Type().IsRegular():
		if b, ok := l.dir.ReadListed(name, e, workspace.MaxFileBytes); ok {
			return b, nil
		}
	}
	return fs.ReadFile(l.dir, name)
}

// Open implements fs.FS.
func (l *listedDir) Open(name string) (fs.File, error) { return l.dir.Open(name) }

// Stat implements fs.StatFS.
func (l *listedDir) Stat(name string) (fs.FileInfo, error) { return l.dir.Stat(name) }

// Sub implements fs.SubFS, with workspace.Dir's checks of the way there.
func (l *listedDir) Sub(dir string) (fs.FS, error) { return l.dir.Sub(dir) }

// OpenListed and ReadListed are workspace.Dir's (see prompt's
// listedOpener and listedReader).
func (l *listedDir) OpenListed(name string, e fs.DirEntry) (fs.File, error) {
	return l.dir.OpenListed(name, e)
}

func (l *listedDir) ReadListed(name string, e fs.DirEntry, max int64) ([]byte, bool) {
	return l.dir.ReadListed(name, e, max)
}

var (
	_ fs.ReadDirFS  = (*listedDir)(nil)
	_ fs.ReadFileFS = (*listedDir)(nil)
	_ fs.StatFS     = (*listedDir)(nil)
	_ fs.SubFS      = (*listedDir)(nil)
)
