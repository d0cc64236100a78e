package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Snapshot is one commit's tree as a read-only file system. It implements
// fs.FS, fs.ReadFileFS, fs.ReadDirFS and fs.StatFS; nothing is checked
// out, every read goes to the object database.
//
// Symbolic links are reported with fs.ModeSymlink and are not followed:
// opening one reads the link target as the file's content. Submodule
// entries (gitlinks) are left out: they have no content in this
// repository. Every file's modification time is the commit's committer
// time.
//
// A Snapshot is safe for concurrent use.
type Snapshot struct {
	access  func(func(storer.EncodedObjectStorer) error) error
	repo    *Repository
	commit  plumbing.Hash
	root    plumbing.Hash
	modTime time.Time

	mu    sync.Mutex
	trees map[string]*treeDir
}

// treeCache keeps decoded trees by hash, shared by a repository's
// snapshots (trees are immutable, so entries never go stale). It is
// cleared when the trees it holds have treeCacheEntries entries in all:
// bounded by their size, not their number, since under a stream of
// commits each one adds a new version of every tree on its path, some
// of them (a users/ directory) thousands of entries long.
//
// The trees this process wrote are also kept by path, the latest version
// of each (latest): under appends by a thousand users the users/ tree
// fills the cache every few dozen commits, long before an append comes
// back to a user's directory, which was then read from the pack again.
// Only the trees of the directories the history still has are kept so,
// and no more entries than treeCacheEntries in all.
type treeCache struct {
	mu      sync.Mutex
	m       map[plumbing.Hash]*treeDir
	entries int

	latest newest[string, pathTree] // by directory ("." for the root), in entries
}

// pathTree is a tree a commit wrote at a path: its hash and entries.
type pathTree struct {
	h plumbing.Hash
	d *treeDir
}

// treeCacheEntries bounds the tree entries a repository keeps decoded
// (about 110 bytes each, so about 7 MB): a push to a 5,000-file
// repository reads a fraction of it. Under appends the cache fills with
// old versions of the users/ directory, so more is memory a daemon under
// writes holds and a restarted one does not.
const treeCacheEntries = 64_000

// get returns tree h's entries if c (which may be nil) holds them.
func (c *treeCache) get(h plumbing.Hash) (*treeDir, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[h]
	return d, ok
}

// getAt returns tree h, at directory p ("." for the root), if c (which
// may be nil) holds it.
func (c *treeCache) getAt(p string, h plumbing.Hash) (*treeDir, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.m[h]; ok {
		return d, true
	}
	if t, ok := c.latest.get(p); ok && t.h == h {
		return t.d, true
	}
	return nil, false
}

// putWritten keeps tree h, which a commit wrote at directory p ("." for
// the root), as put does and as the latest at p.
func (c *treeCache) putWritten(p string, h plumbing.Hash, d *treeDir) {
	if c == nil {
		return
	}
	c.put(h, d)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latest.put(p, pathTree{h, d}, len(d.entries), treeCacheEntries)
}

// put keeps tree h's entries d in c (which may be nil: then not).
func (c *treeCache) put(h plumbing.Hash, d *treeDir) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.entries+len(d.entries) > treeCacheEntries {
		c.m, c.entries = make(map[plumbing.Hash]*treeDir), 0
	}
	if _, ok := c.m[h]; !ok {
		c.entries += len(d.entries)
	}
	c.m[h] = d
}

// treeDir is a decoded tree object with its entries in fs order.
type treeDir struct {
	entries []object.TreeEntry // sorted by name, submodules left out
	whole   bool               // no submodule was left out
}

// newTreeDir is the treeDir of a tree's entries (in any order; es is
// not kept).
func newTreeDir(es []object.TreeEntry) *treeDir {
	d := &treeDir{entries: make([]object.TreeEntry, 0, len(es)), whole: true}
	for _, e := range es {
		if e.Mode == filemode.Submodule {
			d.whole = false
			continue
		}
		d.entries = append(d.entries, e)
	}
	// Git orders a directory as if its name ended in "/"; fs wants plain
	// name order.
	if !slices.IsSortedFunc(d.entries, byName) {
		slices.SortFunc(d.entries, byName)
	}
	return d
}

func byName(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) }

// find returns the entry called name.
func (d *treeDir) find(name string) (object.TreeEntry, bool) {
	i, ok := slices.BinarySearchFunc(d.entries, name, func(e object.TreeEntry, name string) int { return strings.Compare(e.Name, name) })
	if !ok {
		return object.TreeEntry{}, false
	}
	return d.entries[i], true
}

// newSnapshot reads commit h from st.
func newSnapshot(st storer.EncodedObjectStorer, h plumbing.Hash) (*Snapshot, error) {
	c, err := object.GetCommit(st, h)
	if err != nil {
		return nil, fmt.Errorf("read commit: %w", err)
	}
	return &Snapshot{
		access:  func(fn func(storer.EncodedObjectStorer) error) error { return fn(st) },
		commit:  h,
		root:    c.TreeHash,
		modTime: c.Committer.When,
		trees:   map[string]*treeDir{},
	}, nil
}

// Commit is the hash of the snapshot's commit.
func (s *Snapshot) Commit() plumbing.Hash { return s.commit }

// Tree is the hash of the snapshot's root tree.
func (s *Snapshot) Tree() plumbing.Hash { return s.root }

// Time is the commit's committer time, reported as every file's
// modification time.
func (s *Snapshot) Time() time.Time { return s.modTime }

// dir returns the decoded tree at directory p ("." for the root).
func (s *Snapshot) dir(p string) (*treeDir, error) {
	s.mu.Lock()
	d, ok := s.trees[p]
	s.mu.Unlock()
	if ok {
		return d, nil
	}
	var h plumbing.Hash
	if p == "." {
		h = s.root
	} else {
		e, err := s.entry(p)
		if err != nil {
			return nil, err
		}
		if e.Mode != filemode.Dir {
			return nil, errNotDir
		}
		h = e.Hash
	}
	if s.repo != nil {
		if d, ok := s.repo.trees.getAt(p, h); ok {
			s.mu.Lock()
			s.trees[p] = d
			s.mu.Unlock()
			return d, nil
		}
	}
	var t *object.Tree
	err := s.access(func(st storer.EncodedObjectStorer) error {
		var err error
		t, err = object.GetTree(st, h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	d = newTreeDir(t.Entries)
	if s.repo != nil {
		s.repo.trees.put(h, d)
	}
	s.mu.Lock()
	s.trees[p] = d
	s.mu.Unlock()
	return d, nil
}

var errNotDir = errors.New("not a directory")

// entry finds the tree entry at a valid, non-root path.
func (s *Snapshot) entry(name string) (object.TreeEntry, error) {
	parent, base := path.Split(name)
	parent = strings.TrimSuffix(parent, "/")
	if parent == "" {
		parent = "."
	}
	d, err := s.dir(parent)
	if err != nil {
		return object.TreeEntry{}, err
	}
	e, ok := d.find(base)
	if !ok {
		return object.TreeEntry{}, fs.ErrNotExist
	}
	return e, nil
}

// pathErr wraps err for fs callers: a missing entry or a file used as a
// directory is fs.ErrNotExist.
func pathErr(op, name string, err error) error {
	if errors.Is(err, errNotDir) {
		err = fs.ErrNotExist
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (s *Snapshot) blob(h plumbing.Hash) ([]byte, error) {
	var b []byte
	err := s.access(func(st storer.EncodedObjectStorer) error {
		o, err := st.EncodedObject(plumbing.BlobObject, h)
		if err != nil {
			return err
		}
		r, err := o.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		b = make([]byte, 0, o.Size())
		buf := bytes.NewBuffer(b)
		if _, err := io.Copy(buf, r); err != nil {
			return err
		}
		b = buf.Bytes()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return b, nil
}

func (s *Snapshot) size(h plumbing.Hash) (int64, error) {
	var n int64
	err := s.access(func(st storer.EncodedObjectStorer) error {
		var err error
		n, err = st.EncodedObjectSize(h)
		return err
	})
	return n, err
}

func modeOf(m filemode.FileMode) fs.FileMode {
	switch m {
	case filemode.Dir:
		return fs.ModeDir | 0o755
	case filemode.Executable:
		return 0o755
	case filemode.Symlink:
		return fs.ModeSymlink | 0o777
	default:
		return 0o644
	}
}

// Open opens the named file or directory.
func (s *Snapshot) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, pathErr("open", name, fs.ErrInvalid)
	}
	if name == "." {
		d, err := s.dir(".")
		if err != nil {
			return nil, pathErr("open", name, err)
		}
		return &dirFile{s: s, info: s.rootInfo(), d: d}, nil
	}
	e, err := s.entry(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	if e.Mode == filemode.Dir {
		d, err := s.dir(name)
		if err != nil {
			return nil, pathErr("open", name, err)
		}
		return &dirFile{s: s, info: s.info(e, 0), d: d}, nil
	}
	b, err := s.blob(e.Hash)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return &file{Reader: bytes.NewReader(b), info: s.info(e, int64(len(b)))}, nil
}

// ReadFile reads the named file. The returned slice is the caller's.
func (s *Snapshot) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, pathErr("read", name, fs.ErrInvalid)
	}
	if name == "." {
		return nil, pathErr("read", name, errors.New("is a directory"))
	}
	e, err := s.entry(name)
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	if e.Mode == filemode.Dir {
		return nil, pathErr("read", name, errors.New("is a directory"))
	}
	b, err := s.blob(e.Hash)
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	return b, nil
}

// ReadDir lists the named directory in name order.
func (s *Snapshot) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, pathErr("readdir", name, fs.ErrInvalid)
	}
	d, err := s.dir(name)
	if err != nil {
		return nil, pathErr("readdir", name, err)
	}
	return s.dirEntries(d.entries), nil
}

func (s *Snapshot) dirEntries(es []object.TreeEntry) []fs.DirEntry {
	out := make([]fs.DirEntry, len(es))
	for i, e := range es {
		out[i] = &dirEntry{s: s, e: e}
	}
	return out
}

// Hash is the git object hash of the named file's content (its blob; see
// BlobHash) or directory (its tree), read without reading the content.
func (s *Snapshot) Hash(name string) (plumbing.Hash, error) {
	if !fs.ValidPath(name) {
		return plumbing.ZeroHash, pathErr("hash", name, fs.ErrInvalid)
	}
	if name == "." {
		return s.root, nil
	}
	e, err := s.entry(name)
	if err != nil {
		return plumbing.ZeroHash, pathErr("hash", name, err)
	}
	return e.Hash, nil
}

// Stat describes the named file or directory.
func (s *Snapshot) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, pathErr("stat", name, fs.ErrInvalid)
	}
	if name == "." {
		return s.rootInfo(), nil
	}
	e, err := s.entry(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	var n int64
	if e.Mode != filemode.Dir {
		if n, err = s.size(e.Hash); err != nil {
			return nil, pathErr("stat", name, err)
		}
	}
	return s.info(e, n), nil
}

func (s *Snapshot) rootInfo() *fileInfo {
	return &fileInfo{name: ".", mode: fs.ModeDir | 0o755, modTime: s.modTime}
}

func (s *Snapshot) info(e object.TreeEntry, size int64) *fileInfo {
	return &fileInfo{name: e.Name, size: size, mode: modeOf(e.Mode), modTime: s.modTime}
}

// fileInfo is an fs.FileInfo for a tree entry.
type fileInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
}

func (i *fileInfo) Name() string       { return i.name }
func (i *fileInfo) Size() int64        { return i.size }
func (i *fileInfo) Mode() fs.FileMode  { return i.mode }
func (i *fileInfo) ModTime() time.Time { return i.modTime }
func (i *fileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *fileInfo) Sys() any           { return nil }

// dirEntry is an fs.DirEntry whose size is read only when Info is called.
type dirEntry struct {
	s *Snapshot
	e object.TreeEntry
}

func (d *dirEntry) Name() string      { return d.e.Name }
func (d *dirEntry) IsDir() bool       { return d.e.Mode == filemode.Dir }
func (d *dirEntry) Type() fs.FileMode { return modeOf(d.e.Mode).Type() }
func (d *dirEntry) Info() (fs.FileInfo, error) {
	var n int64
	if d.e.Mode != filemode.Dir {
		var err error
		if n, err = d.s.size(d.e.Hash); err != nil {
			return nil, pathErr("stat", d.e.Name, err)
		}
	}
	return d.s.info(d.e, n), nil
}
func (d *dirEntry) String() string { return fs.FormatDirEntry(d) }

// file is an open regular file or symbolic link.
type file struct {
	*bytes.Reader
	info *fileInfo
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dirFile is an open directory.
type dirFile struct {
	s    *Snapshot
	info *fileInfo
	d    *treeDir
	off  int
}

func (f *dirFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *dirFile) Close() error               { return nil }
func (f *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: errors.New("is a directory")}
}

func (f *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := f.d.entries[f.off:]
	if n <= 0 {
		f.off = len(f.d.entries)
		return f.s.dirEntries(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	f.off += len(rest)
	return f.s.dirEntries(rest), nil
}
