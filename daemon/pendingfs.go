package daemon

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/workspace"
)

// pendingFS is a tree with a batch's writes applied on top, as the next
// write in the batch reads it. Its base must not change while it is in
// use (a snapshot; or, for the check of one write, the batch's tree as
// that write reads it). Once no more writes are applied, it may be read
// concurrently (the budgets of the batch's writes: batchTree).
type pendingFS struct {
	base  fs.FS
	files map[string]*gitsync.FileWrite // path → the latest write to it
	order []string                      // paths in the order first written
	// direct indexes files by directory: name → the latest write to it.
	// below counts, by directory and child, the pending (not deleted)
	// files below the child; live counts them all. A listing looks up
	// its own directory's, not every write of the batch.
	direct map[string]map[string]*gitsync.FileWrite
	below  map[string]map[string]int
	live   int
	// listed holds the base's listings read so far, sorted by name:
	// each write of a batch lists the same large directories. folded
	// indexes them by lowered name, for the case rule's look-ups. mu
	// guards both.
	mu     sync.Mutex
	listed map[string][]fs.DirEntry
	folded map[string]*foldedIndex
}

// foldedIndex indexes a listing by lowered name: first is the position
// of the first entry of each, next that of the entry after i with the
// same lowered name (-1: none). A listing of thousands of users makes
// two allocations, not one a name.
type foldedIndex struct {
	first map[string]int32
	next  []int32
}

// newFoldedIndex returns the index of es.
func newFoldedIndex(es []fs.DirEntry) *foldedIndex {
	idx := &foldedIndex{first: make(map[string]int32, len(es)), next: make([]int32, len(es))}
	var last map[string]int32 // of lowered names seen twice or more: rare
	for i, e := range es {
		idx.next[i] = -1
		k := strings.ToLower(e.Name())
		j, seen := idx.first[k]
		if !seen {
			idx.first[k] = int32(i)
			continue
		}
		if l, ok := last[k]; ok {
			j = l
		}
		if last == nil {
			last = map[string]int32{}
		}
		idx.next[j], last[k] = int32(i), int32(i)
	}
	return idx
}

// appendMatches appends to out the entries of es (the listing indexed)
// whose lowered name is k.
func (idx *foldedIndex) appendMatches(out, es []fs.DirEntry, k string) []fs.DirEntry {
	i, ok := idx.first[k]
	for ok && i >= 0 {
		out = append(out, es[i])
		i = idx.next[i]
	}
	return out
}

func newPendingFS(base fs.FS) *pendingFS {
	return &pendingFS{base: base, files: map[string]*gitsync.FileWrite{},
		direct: map[string]map[string]*gitsync.FileWrite{}, below: map[string]map[string]int{},
		listed: map[string][]fs.DirEntry{}, folded: map[string]*foldedIndex{}}
}

// baseDir is the base's listing of name, sorted by name; the caller must
// not modify it.
func (p *pendingFS) baseDir(name string) ([]fs.DirEntry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.baseDirLocked(name)
}

func (p *pendingFS) baseDirLocked(name string) ([]fs.DirEntry, error) {
	if es, ok := p.listed[name]; ok {
		return es, nil
	}
	es, err := fs.ReadDir(p.base, name)
	if err != nil {
		return nil, err
	}
	es = sortedEntries(es)
	p.listed[name] = es
	return es, nil
}

// baseFolded is the base's entries of name whose lowered names are among
// lower, sorted by name: from the base's own look-up when it has one
// (the batch's tree under one write's check), else from an index of its
// listing made once.
func (p *pendingFS) baseFolded(name string, lower []string) ([]fs.DirEntry, error) {
	if f, ok := p.base.(workspace.FoldedDirFS); ok {
		return f.ReadDirFolded(name, lower)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	es, err := p.baseDirLocked(name)
	if err != nil {
		return nil, err
	}
	idx, ok := p.folded[name]
	if !ok {
		idx = newFoldedIndex(es)
		p.folded[name] = idx
	}
	var out []fs.DirEntry
	for _, k := range lower {
		out = idx.appendMatches(out, es, k)
	}
	return sortedEntries(out), nil
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
		dir, name := splitDir(w.Path)
		if p.direct[dir] == nil {
			p.direct[dir] = map[string]*gitsync.FileWrite{}
		}
		p.direct[dir][name] = &nw
		delta := btoi(!nw.Delete) - btoi(ok && !prev.Delete)
		if delta != 0 {
			p.live += delta
			p.countBelow(dir, delta)
		}
	}
}

// countBelow adds delta to the pending files below each directory on
// the way down to dir.
func (p *pendingFS) countBelow(dir string, delta int) {
	for dir != "." {
		parent, name := splitDir(dir)
		m := p.below[parent]
		if m == nil {
			m = map[string]int{}
			p.below[parent] = m
		}
		if m[name] += delta; m[name] == 0 {
			delete(m, name)
		}
		dir = parent
	}
}

// splitDir splits a slash path into its directory ("." at the root) and
// its last element.
func splitDir(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ".", p
	}
	return p[:i], p[i+1:]
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
	if dir == "." {
		return p.live > 0
	}
	parent, name := splitDir(dir)
	return p.below[parent][name] > 0
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

// Open opens a file the batch did not write as the base does, without
// stating it first (a git snapshot's Stat looks the object up apart from
// reading it); a directory lists the batch's writes too.
func (p *pendingFS) Open(name string) (fs.File, error) {
	if w, ok := p.files[name]; ok {
		if w.Delete {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return &memFile{Reader: bytes.NewReader(w.Content), info: memInfo{name: path.Base(name), size: int64(len(w.Content))}}, nil
	}
	f, err := p.base.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name) {
			return p.openDir(name)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		return f, nil
	}
	f.Close()
	return p.openDir(name)
}

// openDir opens directory name, the batch's writes listed.
func (p *pendingFS) openDir(name string) (fs.File, error) {
	es, err := p.ReadDir(name)
	if err != nil {
		return nil, err
	}
	return &memDir{info: dirInfo{name: path.Base(name)}, entries: es}, nil
}

// ReadDir lists the base's entries with the batch's writes applied. A
// directory the writes leave as it was (a user's directory among
// thousands, under a stream of appends) costs its base listing and a
// look at the writes to it, never a map or a sort of every entry.
func (p *pendingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := p.baseDir(name)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name)) {
		return nil, err
	}
	files, dirs := p.direct[name], p.below[name]
	if len(files) == 0 && hasDirs(es, dirs) {
		return slices.Clone(es), nil
	}
	return merged(es, files, dirs, nil), nil
}

// ReadDirFolded implements workspace.FoldedDirFS: ReadDir's entries
// whose lowered names are among lower, without listing the directory
// again.
func (p *pendingFS) ReadDirFolded(name string, lower []string) ([]fs.DirEntry, error) {
	es, err := p.baseFolded(name, lower)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && p.dirHasPending(name)) {
		return nil, err
	}
	return merged(es, p.direct[name], p.below[name], lower), nil
}

// merged is es (sorted by name) with the writes to its files and the
// directories some pending file lies below, sorted by name; only those
// whose lowered names are among lower when lower is not nil. It reads
// files and dirs, never changes them.
func merged(es []fs.DirEntry, files map[string]*gitsync.FileWrite, dirs map[string]int, lower []string) []fs.DirEntry {
	out := make([]fs.DirEntry, 0, len(es)+len(files))
	for _, e := range es {
		n := e.Name()
		if w, ok := files[n]; ok {
			if w.Delete {
				continue
			}
			e = fs.FileInfoToDirEntry(memInfo{name: n, size: int64(len(w.Content))})
		}
		out = append(out, e)
	}
	asked := func(n string) bool { return lower == nil || slices.Contains(lower, strings.ToLower(n)) }
	inBase := func(n string) bool {
		_, ok := slices.BinarySearchFunc(es, n, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
		return ok
	}
	for n, w := range files {
		if !w.Delete && !inBase(n) && asked(n) {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: n, size: int64(len(w.Content))}))
		}
	}
	for n := range dirs {
		if w, ok := files[n]; (!ok || w.Delete) && !inBase(n) && asked(n) {
			out = append(out, fs.FileInfoToDirEntry(dirInfo{name: n}))
		}
	}
	return sortedEntries(out)
}

// hasDirs reports whether every one of dirs is a directory of es
// (sorted by name).
func hasDirs(es []fs.DirEntry, dirs map[string]int) bool {
	for d := range dirs {
		i, ok := slices.BinarySearchFunc(es, d, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
		if !ok || !es[i].IsDir() {
			return false
		}
	}
	return true
}

// sortedEntries is es sorted by name (fs.ReadDir's order; a git tree's
// differs where a directory's name is a prefix of another's): es itself
// when it is.
func sortedEntries(es []fs.DirEntry) []fs.DirEntry {
	byName := func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }
	if !slices.IsSortedFunc(es, byName) {
		es = slices.Clone(es)
		slices.SortFunc(es, byName)
	}
	return es
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
