package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// gitStorage is go-git's file system storage with the writes made
// durable: every ref goes through the refStore (lock file, fsync,
// rename), every object arrives in a pack that is synced and made visible
// (pack, then index) before a ref can name it. go-git never writes a
// loose object or moves a ref in place for us.
type gitStorage struct {
	*filesystem.Storage
	refs    *refStore
	packDir string
	// disk reads the packs (go-git's storage reads only loose objects
	// here, see objects.go) and keeps the inflated objects of both.
	disk *packSet

	// packs counts the packs written since the last repack; onPack, when
	// set, is called after each (maintenance).
	packs  atomic.Int64
	onPack func()
	// zlib compresses the objects of the packs written here. Callers
	// hold Repository.mu.
	zlib packZlib
	// paths holds the paths of the trees and blobs of the commits
	// written here, for the next roll-up.
	paths pathBook
}

func (s *gitStorage) packAdded() {
	s.packs.Add(1)
	if s.onPack != nil {
		s.onPack()
	}
}

var _ storage.Storer = (*gitStorage)(nil)

// reindex makes the packSet list the pack directory again (new packs,
// packs a repack removed) at its next read. go-git's storage holds no
// pack to forget (looseFS). Callers hold Repository.mu.
func (s *gitStorage) reindex() {
	s.disk.stale = true
}

// Reference reads a ref through the refStore (a damaged ref is a
// *BrokenRefError naming it).
func (s *gitStorage) Reference(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	return s.refs.read(name)
}

// SetReference writes a ref durably.
func (s *gitStorage) SetReference(ref *plumbing.Reference) error {
	return s.refs.update(ref.Name(), ref, nil)
}

// CheckAndSetReference writes ref if the ref still has old's value.
func (s *gitStorage) CheckAndSetReference(ref, old *plumbing.Reference) error {
	var exp expectation
	if old != nil && old.Type() == plumbing.HashReference {
		h := old.Hash()
		exp = &h
	}
	err := s.refs.update(ref.Name(), ref, exp)
	if errors.Is(err, ErrStale) {
		return fmt.Errorf("%w: %w", storage.ErrReferenceHasChanged, err)
	}
	return err
}

// RemoveReference deletes a ref (loose and packed).
func (s *gitStorage) RemoveReference(name plumbing.ReferenceName) error {
	return s.refs.update(name, nil, nil)
}

// IterReferences lists HEAD and every readable ref under refs/.
func (s *gitStorage) IterReferences() (storer.ReferenceIter, error) {
	refs, _, err := s.refs.list()
	if err != nil {
		return nil, err
	}
	if head, err := s.refs.read(plumbing.HEAD); err == nil {
		refs = append([]*plumbing.Reference{head}, refs...)
	}
	return storer.NewReferenceSliceIter(refs), nil
}

// PackRefs is not done: loose refs are what the refStore writes safely.
func (s *gitStorage) PackRefs() error { return nil }

// EncodedObject reads an object from the packs and loose objects on
// disk, listing the pack directory again once on a miss (another
// process added or repacked packs).
func (s *gitStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.object(h)
	if err != nil && isMissing(err) {
		s.reindex()
		o, err = s.object(h)
	}
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && o.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return o, nil
}

// DeltaObject reads an object whole: no caller here reuses a pack's
// deltas.
func (s *gitStorage) DeltaObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	return s.EncodedObject(t, h)
}

// HasEncodedObject reports whether the object exists.
func (s *gitStorage) HasEncodedObject(h plumbing.Hash) error {
	err := s.has(h)
	if err != nil && isMissing(err) {
		s.reindex()
		err = s.has(h)
	}
	return err
}

// EncodedObjectSize returns an object's inflated size.
func (s *gitStorage) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	n, err := s.objectSize(h)
	if err != nil && isMissing(err) {
		s.reindex()
		n, err = s.objectSize(h)
	}
	return n, err
}

// isMissing: the object is not found, or a pack go-git knew is gone (a
// repack removed it: go-git then reports ErrPackfileNotFound).
func isMissing(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, dotgit.ErrPackfileNotFound)
}

// SetEncodedObject writes one object as a pack of its own (go-git's loose
// objects are neither synced nor cheap to keep).
func (s *gitStorage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	p := newPending(s)
	h, err := p.SetEncodedObject(o)
	if err != nil {
		return h, err
	}
	return h, s.writePending(p)
}

// PackfileWriter receives a fetched pack: it is written to a temporary
// file, indexed, synced and only then made visible.
func (s *gitStorage) PackfileWriter() (io.WriteCloser, error) {
	f, err := os.CreateTemp(s.packDir, ownTemporary+"pack_")
	if err != nil {
		return nil, fmt.Errorf("write pack: %w", err)
	}
	return &packWriter{s: s, f: f}, nil
}

type packWriter struct {
	s *gitStorage
	f *os.File
	n int64
}

func (w *packWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *packWriter) Close() error {
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	if w.n == 0 {
		os.Remove(w.f.Name())
		return nil
	}
	if _, err := installPack(w.s.packDir, w.f.Name()); err != nil {
		return err
	}
	w.s.packAdded()
	w.s.reindex()
	return nil
}

// installPack indexes the complete pack file tmp (in packDir), syncs pack
// and index and renames them to pack-<checksum>.pack and .idx, the index
// last (it makes the pack visible), then syncs the directory.
func installPack(packDir, tmp string) (sum plumbing.Hash, err error) {
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return sum, fmt.Errorf("index pack: %w", err)
	}
	defer f.Close()
	iw := new(idxfile.Writer)
	p, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		return sum, fmt.Errorf("index pack %s: %w", tmp, err)
	}
	if sum, err = p.Parse(); err != nil {
		return sum, fmt.Errorf("index pack %s: %w", tmp, err)
	}
	idx, err := iw.Index()
	if err != nil {
		return sum, fmt.Errorf("index pack %s: %w", tmp, err)
	}
	var b bytes.Buffer
	if _, err := idxfile.NewEncoder(&b).Encode(idx); err != nil {
		return sum, fmt.Errorf("index pack %s: %w", tmp, err)
	}
	return sum, installIndexed(packDir, f, b.Bytes(), sum)
}

// installIndexed writes idx, the index file of the complete pack f (a
// temporary file in packDir whose checksum is sum), syncs pack and index
// and renames them to pack-<sum>.pack and .idx, the index last (it makes
// the pack visible), then syncs the directory. It does not close f.
func installIndexed(packDir string, f *os.File, idx []byte, sum plumbing.Hash) error {
	tmp := f.Name()
	// The pack is synced while its index is written and synced: two
	// waits for the disk overlap instead of following each other (an
	// append's latency is mostly such waits).
	packSynced := make(chan error, 1)
	go func() { packSynced <- f.Sync() }()
	xf, err := createTemp(packDir, ownTemporary+"idx_")
	if err != nil {
		<-packSynced
		return fmt.Errorf("write pack index: %w", err)
	}
	moved := false
	defer func() {
		if !moved {
			os.Remove(xf.Name())
		}
	}()
	_, err = xf.Write(idx)
	if err == nil {
		err = xf.Sync()
	}
	if cerr := xf.Close(); err == nil {
		err = cerr
	}
	if perr := <-packSynced; perr != nil {
		return fmt.Errorf("sync pack %s: %w", tmp, perr)
	}
	if err != nil {
		return fmt.Errorf("write pack index %s: %w", xf.Name(), err)
	}
	err = movePack(packDir, tmp, xf.Name(), sum)
	moved = err == nil
	return err
}

// movePack renames a synced pack and its synced index into packDir, the
// pack first, then syncs packDir.
func movePack(packDir, pack, idx string, sum plumbing.Hash) error {
	base := filepath.Join(packDir, "pack-"+sum.String())
	if err := renameFile(pack, base+".pack"); err != nil {
		return fmt.Errorf("install pack: %w", err)
	}
	if err := renameFile(idx, base+".idx"); err != nil {
		return fmt.Errorf("install pack index: %w", err)
	}
	return syncDir(packDir)
}

// syncFile syncs a file already written by another process.
func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// writePending stores the objects of p as one pack, which the packSet
// reads from then on, and keeps them in the object cache. Callers hold
// Repository.mu.
func (s *gitStorage) writePending(p *pending) error {
	if len(p.order) == 0 {
		return nil
	}
	f, err := createTemp(s.packDir, ownTemporary+"pack_")
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	mos := make([]*plumbing.MemoryObject, len(p.order))
	for i, h := range p.order {
		mos[i] = p.objs[h]
	}
	sum, idx, err := writeOwnPack(f, mos, p.names, &s.zlib)
	if err == nil {
		err = installIndexed(s.packDir, f, idx, sum)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write pack: %w", err)
	}
	s.packAdded()
	if err := s.disk.add(sum, idx); err != nil {
		s.reindex() // the pack is there: the next read lists it
	}
	s.disk.wrote(mos, p.names)
	s.paths.add(p.names)
	for _, t := range p.made {
		p.trees.putWritten(t.dir, t.h, newTreeDir(t.entries))
	}
	return nil
}

// pending collects the new objects of one commit in memory, reading
// everything else from base.
type pending struct {
	base  storer.EncodedObjectStorer
	objs  map[plumbing.Hash]*plumbing.MemoryObject
	order []plumbing.Hash
	// trees, when set, is the repository's tree cache: writeTree reads
	// trees from it, and the trees made (made) go into it once
	// writePending has written them.
	trees *treeCache
	made  []madeTree
	// names is the path of each new tree and blob writeTree wrote (""
	// for the root tree).
	names map[plumbing.Hash]string
}

// madeTree is a tree writeTree made: its hash, directory (see
// treeDirPath) and entries, in git order.
type madeTree struct {
	h       plumbing.Hash
	dir     string
	entries []object.TreeEntry
}

func newPending(base storer.EncodedObjectStorer) *pending {
	return &pending{base: base, objs: map[plumbing.Hash]*plumbing.MemoryObject{}, names: map[plumbing.Hash]string{}}
}

// name records path as the path of h when h is one of p's new objects.
func (p *pending) name(h plumbing.Hash, path string) {
	if _, ok := p.objs[h]; ok {
		p.names[h] = path
	}
}

func (p *pending) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (p *pending) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	h := o.Hash()
	if _, ok := p.objs[h]; ok {
		return h, nil
	}
	mo, ok := o.(*plumbing.MemoryObject)
	if !ok {
		src := o
		if err := copyObject(&src); err != nil {
			return h, err
		}
		mo = src.(*plumbing.MemoryObject)
	}
	p.objs[h] = mo
	p.order = append(p.order, h)
	return h, nil
}

func (p *pending) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := p.objs[h]; ok {
		if t != plumbing.AnyObject && o.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return o, nil
	}
	return p.base.EncodedObject(t, h)
}

func (p *pending) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errors.New("pending objects cannot be iterated")
}

func (p *pending) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := p.objs[h]; ok {
		return nil
	}
	return p.base.HasEncodedObject(h)
}

func (p *pending) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := p.objs[h]; ok {
		return o.Size(), nil
	}
	return p.base.EncodedObjectSize(h)
}

func (p *pending) AddAlternate(string) error { return errors.New("alternates not supported") }

// locateGitDir finds the git directory and the common directory (refs,
// objects) of the repository at or above path.
func locateGitDir(path string) (gitDir, commonDir string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if isGitDir(d) {
			gitDir = d
			break
		}
		dot := filepath.Join(d, ".git")
		if st, err := os.Stat(dot); err == nil {
			if st.IsDir() {
				gitDir = dot
				break
			}
			b, err := os.ReadFile(dot)
			if err != nil {
				return "", "", err
			}
			g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
			if !ok {
				return "", "", fmt.Errorf("%s: not a gitdir file", dot)
			}
			if !filepath.IsAbs(g) {
				g = filepath.Join(d, g)
			}
			gitDir = g
			break
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("%s: no git directory", path)
		}
	}
	commonDir = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = filepath.Clean(c)
	}
	return gitDir, commonDir, nil
}

func isGitDir(d string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, n)); err != nil {
			return false
		}
	}
	return true
}

// Close closes the pack files open for reads; they reopen on demand.
func (s *gitStorage) Close() error {
	return errors.Join(s.disk.close(), s.Storage.Close())
}
