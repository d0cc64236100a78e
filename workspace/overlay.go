package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// WithFiles is base with files written over it: a name mapped to content
// reads that content, a name mapped to nil does not exist. Listings show
// the written files (and the directories they imply) and hide the removed
// ones. It is the tree a write would make, for checking it before the
// write is committed.
func WithFiles(base fs.FS, files map[string][]byte) fs.FS {
	return &overlayFS{base: base, files: files}
}

type overlayFS struct {
	base  fs.FS
	files map[string][]byte
}

func (o *overlayFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if b, ok := o.files[name]; ok {
		if b == nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return &memFile{Reader: bytes.NewReader(b), info: memInfo{name: path.Base(name), size: int64(len(b))}}, nil
	}
	f, err := o.base.Open(name)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !o.implied(name) {
		return f, err
	}
	return &memDir{info: memInfo{name: path.Base(name), dir: true}}, nil
}

func (o *overlayFS) Stat(name string) (fs.FileInfo, error) {
	if b, ok := o.files[name]; ok {
		if b == nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		}
		return memInfo{name: path.Base(name), size: int64(len(b))}, nil
	}
	fi, err := fs.Stat(o.base, name)
	if err != nil && errors.Is(err, fs.ErrNotExist) && o.implied(name) {
		return memInfo{name: path.Base(name), dir: true}, nil
	}
	return fi, err
}

func (o *overlayFS) ReadFile(name string) ([]byte, error) {
	if b, ok := o.files[name]; ok {
		if b == nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
		}
		return bytes.Clone(b), nil
	}
	return fs.ReadFile(o.base, name)
}

func (o *overlayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(o.base, name)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && o.implied(name)) {
		return nil, err
	}
	byName := map[string]fs.DirEntry{}
	for _, e := range es {
		byName[e.Name()] = e
	}
	prefix := ""
	if name != "." {
		prefix = name + "/"
	}
	for p, b := range o.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		first, _, deeper := strings.Cut(rest, "/")
		switch {
		case deeper:
			if _, ok := byName[first]; !ok {
				byName[first] = fs.FileInfoToDirEntry(memInfo{name: first, dir: true})
			}
		case b == nil:
			delete(byName, first)
		default:
			byName[first] = fs.FileInfoToDirEntry(memInfo{name: first, size: int64(len(b))})
		}
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// implied reports whether a written file lies below dir.
func (o *overlayFS) implied(dir string) bool {
	if dir == "." {
		return true
	}
	for p, b := range o.files {
		if b != nil && strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

type memFile struct {
	*bytes.Reader
	info memInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

type memDir struct{ info memInfo }

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *memDir) Close() error { return nil }

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
