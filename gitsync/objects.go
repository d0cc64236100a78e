package gitsync

import (
	"bytes"
	"errors"
	"io"
	"path"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// newObjectReader is storage of a repository's objects: go-git's
// storage over fsys (the repository's files) reads the loose objects and
// those of alternates, a packSet the packs in packDir, and both keep
// inflated objects in one cache of cacheSize bytes.
func newObjectReader(fsys billy.Filesystem, packDir string, cacheSize cache.FileSize) *gitStorage {
	c := cache.NewObjectLRU(cacheSize)
	files := looseFS{fsys}
	return &gitStorage{
		Storage: filesystem.NewStorage(files, c),
		packDir: packDir,
		disk:    newPackSet(files, packDir, c),
	}
}

// object reads h from the packs, then from go-git's storage (loose
// objects, alternates). Callers hold Repository.mu.
func (s *gitStorage) object(h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.disk.get(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return s.Storage.EncodedObject(plumbing.AnyObject, h)
	}
	return o, err
}

// has reports whether h is in a pack or loose, without listing the pack
// directory again on a miss.
func (s *gitStorage) has(h plumbing.Hash) error {
	_, _, err := s.disk.find(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return s.Storage.HasEncodedObject(h)
	}
	return err
}

// objectSize is h's inflated size.
func (s *gitStorage) objectSize(h plumbing.Hash) (int64, error) {
	n, err := s.disk.size(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return s.Storage.EncodedObjectSize(h)
	}
	return n, err
}

// HashesWithPrefix lists the objects whose name begins with prefix.
func (s *gitStorage) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	hs, err := s.Storage.HashesWithPrefix(prefix)
	if err != nil {
		return nil, err
	}
	if err := s.disk.ready(); err != nil {
		return nil, err
	}
	seen := map[plumbing.Hash]bool{}
	for _, h := range hs {
		seen[h] = true
	}
	for _, p := range s.disk.packs {
		for i := range p.idx.n {
			if name := p.idx.names[i*20 : i*20+20]; bytes.HasPrefix(name, prefix) {
				h := p.idx.hash(i)
				if !seen[h] {
					seen[h] = true
					hs = append(hs, h)
				}
			}
		}
	}
	return hs, nil
}

// IterEncodedObjects lists the objects of type t (every type:
// plumbing.AnyObject), the loose ones first, then each pack's.
func (s *gitStorage) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	loose, err := s.Storage.IterEncodedObjects(t)
	if err != nil {
		return nil, err
	}
	if err := s.disk.ready(); err != nil {
		return nil, err
	}
	iters := []storer.EncodedObjectIter{loose}
	for _, p := range s.disk.packs {
		iters = append(iters, &lazyPackIter{open: func() (storer.EncodedObjectIter, error) {
			return s.disk.iterPack(p, t)
		}})
	}
	return storer.NewMultiEncodedObjectIter(iters), nil
}

// iterPack lists the objects of type t in p, reading the pack through a
// file of its own (the iteration may outlast the pack's place among the
// open files).
func (ps *packSet) iterPack(p *diskPack, t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	f, err := ps.fs.Open(path.Join(packDir, "pack-"+p.sum.String()+".pack"))
	if err != nil {
		return nil, err
	}
	it, err := packfile.NewPackfileWithCache(p.idx, ps.fs, f, ps.cache, 0).GetByType(t)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &closingIter{EncodedObjectIter: it, close: f.Close}, nil
}

// lazyPackIter opens its iterator on the first Next.
type lazyPackIter struct {
	open func() (storer.EncodedObjectIter, error)
	it   storer.EncodedObjectIter
}

func (l *lazyPackIter) Next() (plumbing.EncodedObject, error) {
	if l.it == nil {
		if l.open == nil {
			return nil, io.EOF
		}
		it, err := l.open()
		if err != nil {
			return nil, err
		}
		l.it = it
	}
	return l.it.Next()
}

func (l *lazyPackIter) ForEach(cb func(plumbing.EncodedObject) error) error {
	return storer.ForEachIterator(l, cb)
}

func (l *lazyPackIter) Close() {
	if l.it != nil {
		l.it.Close()
	}
	l.open, l.it = nil, nil
}

// closingIter closes a file once iterated.
type closingIter struct {
	storer.EncodedObjectIter
	close func() error
}

func (c *closingIter) Close() {
	c.EncodedObjectIter.Close()
	_ = c.close()
}
