package daemon

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/quirehq/quire/gitsync"
)

// pendingFS is a tree with a batch's writes applied on top, as the next
// write in the batch reads it.
type pendingFS struct {
	base  fs.FS
	files map[string]*gitsync.FileWrite // path → the latest write to it
	order []string                      // paths in the order first written
}

func newPendingFS(base fs.FS) *pendingFS {
	return &pendingFS{base: base, files: map[string]*gitsync.FileWrite{}}
}

// apply records writes.
func (p *pendingFS) apply(writes []gitsync.FileWrite) {
	for _, w := range writes {
		prev, ok := p.files[w.Path]
		if !ok {
			p.order = append(p.order, w.Path)
		}
		nw := w
		if ok && prev.Match != nil {
			// The batch's commit goes on the base: the first write's
			// condition on it is the one that holds.
			nw.Match = prev.Match
		}
		p.files[w.Path] = &nw
	}
}

// changes is the final state of every path written, in the order first
// written; a file created and deleted within the batch is left out.
func (p *pendingFS) changes() []gitsync.FileWrite {
	out := make([]gitsync.FileWrite, 0, len(p.order))
	for _, name := range p.order {
		w := p.files[name]
		if w.Delete {
			if _, err := fs.Stat(p.base, name); err != nil {
				continue
			}
		}
		out = append(out, *w)
	}
	return out
}

// dirHasPending reports whether a pending (not deleted) file lies under
// dir.
func (p *pendingFS) dirHasPending(dir string) bool {
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	for name, w := range p.files {
		if !w.Delete && strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

func (p *pendingFS) ReadFile(name string) ([]byte, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
		}
		return bytes.Clone(w.Content), nil
	}
	return fs.ReadFile(p.base, name)
}

func (p *pendingFS) Stat(name string) (fs.FileInfo, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		}
		return memInfo{name: path.Base(name), size: int64(len(w.Content))}, nil
	}
	fi, err := fs.Stat(p.base, name)
	if errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name) {
		return dirInfo{name: path.Base(name)}, nil
	}
	return fi, err
}

func (p *pendingFS) Open(name string) (fs.File, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return &memFile{Reader: bytes.NewReader(w.Content), info: memInfo{name: path.Base(name), size: int64(len(w.Content))}}, nil
	}
	fi, err := p.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		es, err := p.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &memDir{info: dirInfo{name: path.Base(name)}, entries: es}, nil
	}
	return p.base.Open(name)
}

// ReadDir lists the base's entries with the batch's writes applied.
func (p *pendingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(p.base, name)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name)) {
		return nil, err
	}
	byName := map[string]fs.DirEntry{}
	for _, e := range es {
		byName[e.Name()] = e
	}
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	for fp, w := range p.files {
		rest, ok := strings.CutPrefix(fp, prefix)
		if !ok {
			continue
		}
		child, _, sub := strings.Cut(rest, "/")
		switch {
		case sub:
			if _, ok := byName[child]; !ok && !w.Delete {
				byName[child] = fs.FileInfoToDirEntry(dirInfo{name: child})
			}
		case w.Delete:
			delete(byName, child)
		default:
			byName[child] = fs.FileInfoToDirEntry(memInfo{name: child, size: int64(len(w.Content))})
		}
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

type dirInfo struct{ name string }

func (i dirInfo) Name() string       { return i.name }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }

type memDir struct {
	info    dirInfo
	entries []fs.DirEntry
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *memDir) Close() error { return nil }
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		es := d.entries
		d.entries = nil
		return es, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	es := d.entries[:n]
	d.entries = d.entries[n:]
	return es, nil
}
