package lsp

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// overlay is an immutable snapshot of the workspace as the editor sees it:
// the directory tree on disk with the text of every open buffer laid over it.
// It is an io/fs.FS rooted at the workspace root, so the prompt code reads it
// exactly as it reads a working tree or a git commit. A change to any buffer
// makes a new overlay; readers holding an old one keep a consistent view.
//
// The disk side is read live: a snapshot pins the buffers, not the disk,
// and disk changes arrive through the watcher as a new snapshot anyway.
type overlay struct {
	disk    fs.FS
	buffers map[string]string // slash path within the root → buffer text
}

var (
	_ fs.ReadFileFS = (*overlay)(nil)
	_ fs.ReadDirFS  = (*overlay)(nil)
	_ fs.StatFS     = (*overlay)(nil)
)

// newOverlay returns a snapshot of disk with no buffers.
func newOverlay(disk fs.FS) *overlay {
	return &overlay{disk: disk, buffers: map[string]string{}}
}

// with returns a new snapshot in which the buffer at name holds text.
func (o *overlay) with(name, text string) *overlay {
	next := &overlay{disk: o.disk, buffers: make(map[string]string, len(o.buffers)+1)}
	for k, v := range o.buffers {
		next.buffers[k] = v
	}
	next.buffers[name] = text
	return next
}

// without returns a new snapshot in which name is read from disk again.
func (o *overlay) without(name string) *overlay {
	next := &overlay{disk: o.disk, buffers: make(map[string]string, len(o.buffers))}
	for k, v := range o.buffers {
		if k != name {
			next.buffers[k] = v
		}
	}
	return next
}

// buffer reports the open buffer at name, if there is one.
func (o *overlay) buffer(name string) (string, bool) {
	text, ok := o.buffers[name]
	return text, ok
}

// Open implements fs.FS.
func (o *overlay) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if text, ok := o.buffers[name]; ok {
		return &bufferFile{info: bufferInfo{name: path.Base(name), size: int64(len(text))}, r: strings.NewReader(text)}, nil
	}
	f, err := o.disk.Open(name)
	if errors.Is(err, fs.ErrNotExist) && o.impliedDir(name) {
		return &dirFile{info: dirInfo{name: path.Base(name)}, entries: o.overlayEntries(name, nil)}, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.IsDir() {
		return f, err
	}
	f.Close()
	entries, err := o.ReadDir(name)
	if err != nil {
		return nil, err
	}
	return &dirFile{info: st, entries: entries}, nil
}

// ReadFile implements fs.ReadFileFS.
func (o *overlay) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	if text, ok := o.buffers[name]; ok {
		return []byte(text), nil
	}
	return fs.ReadFile(o.disk, name)
}

// Stat implements fs.StatFS.
func (o *overlay) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if text, ok := o.buffers[name]; ok {
		return bufferInfo{name: path.Base(name), size: int64(len(text))}, nil
	}
	st, err := fs.Stat(o.disk, name)
	if errors.Is(err, fs.ErrNotExist) && o.impliedDir(name) {
		return dirInfo{name: path.Base(name)}, nil
	}
	return st, err
}

// ReadDir implements fs.ReadDirFS: the directory on disk plus buffers that
// exist only in the editor (a new file not saved yet).
func (o *overlay) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	entries, err := fs.ReadDir(o.disk, name)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && o.impliedDir(name)) {
		return nil, err
	}
	return o.overlayEntries(name, entries), nil
}

// overlayEntries merges the buffers directly below dir into entries, sorted
// by name. A buffer replaces a disk entry of the same name.
func (o *overlay) overlayEntries(dir string, entries []fs.DirEntry) []fs.DirEntry {
	byName := make(map[string]fs.DirEntry, len(entries))
	for _, e := range entries {
		byName[e.Name()] = e
	}
	for name, text := range o.buffers {
		rest, ok := below(dir, name)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if _, exists := byName[rest[:i]]; !exists {
				byName[rest[:i]] = fs.FileInfoToDirEntry(dirInfo{name: rest[:i]})
			}
			continue
		}
		byName[rest] = fs.FileInfoToDirEntry(bufferInfo{name: rest, size: int64(len(text))})
	}
	merged := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		merged = append(merged, e)
	}
	sort.Slice(merged, func(i, j int) bool { return merged[i].Name() < merged[j].Name() })
	return merged
}

// impliedDir reports whether some buffer lies below dir (a directory that
// exists only because an unsaved buffer is in it).
func (o *overlay) impliedDir(dir string) bool {
	for name := range o.buffers {
		if _, ok := below(dir, name); ok {
			return true
		}
	}
	return false
}

// below returns name relative to dir when name lies inside dir.
func below(dir, name string) (string, bool) {
	if dir == "." {
		return name, true
	}
	if strings.HasPrefix(name, dir+"/") {
		return name[len(dir)+1:], true
	}
	return "", false
}

// bufferFile is an open buffer read through fs.File.
type bufferFile struct {
	info bufferInfo
	r    *strings.Reader
}

func (f *bufferFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *bufferFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *bufferFile) Close() error               { return nil }

type bufferInfo struct {
	name string
	size int64
}

func (i bufferInfo) Name() string       { return i.name }
func (i bufferInfo) Size() int64        { return i.size }
func (i bufferInfo) Mode() fs.FileMode  { return 0o644 }
func (i bufferInfo) ModTime() time.Time { return time.Time{} }
func (i bufferInfo) IsDir() bool        { return false }
func (i bufferInfo) Sys() any           { return nil }

// dirFile is a directory opened through the overlay: its entries include
// the buffers in it.
type dirFile struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	offset  int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: errors.New("is a directory")}
}
func (d *dirFile) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.offset:]
	if n <= 0 {
		d.offset = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.offset += n
	return rest[:n], nil
}

type dirInfo struct{ name string }

func (i dirInfo) Name() string       { return i.name }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }
