package gitsync

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// packSet is a repository's packs as this package reads them: each
// pack's index is its .idx file read in place (diskIndex), and the
// packs are decoded by go-git's packfile reader. go-git's own object
// storage holds every index as a MemoryIndex (and the map of offsets
// to names it builds on the first read), which grew with history to
// the largest part of a restarted daemon's heap, and it reads every
// index again whenever the pack directory changes; here an index is
// read once, when its pack first appears. Not safe for concurrent
// use: callers hold Repository.mu.
type packSet struct {
	fs    billy.Filesystem // the repository's file system, as go-git reads it
	dir   string           // the pack directory
	cache cache.Object     // inflated objects, shared with go-git's storage
	// written keeps the blobs this process wrote, apart from cache: the
	// trees every commit rewrites flush cache long before an append
	// comes back to the daily log it wrote, which then had to be
	// inflated again.
	written writtenBlobs

	packs []*diskPack // largest first: most objects are found in the first
	// where names the pack of each object of the packs this process
	// wrote (add), up to whereMax objects: the commit and trees an
	// append reads next are in the newest of the small packs, which a
	// search in packs, largest first, reaches last.
	where map[plumbing.Hash]*diskPack
	stale bool        // list the pack directory before the next read
	lists int         // how often the pack directory was listed
	open  []*diskPack // the packs whose file is open, least recently used first
}

// diskPack is one pack of a packSet.
type diskPack struct {
	sum plumbing.Hash
	idx *diskIndex
	pf  *packfile.Packfile // nil while the file is closed
	// placed: the pack's objects are in packSet.where.
	placed bool
}

// whereMax is the most objects packSet.where names; roll-ups remove the
// small packs (and their objects from where) long before.
const whereMax = 1 << 16

func newPackSet(fsys billy.Filesystem, dir string, c cache.Object) *packSet {
	return &packSet{fs: fsys, dir: dir, cache: c, stale: true}
}

// refresh lists the pack directory: the indexes of new packs are read,
// packs gone are let go of.
func (ps *packSet) refresh() error {
	ps.lists++
	bases, err := listPacks(ps.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list packs: %w", err)
	}
	known := make(map[plumbing.Hash]*diskPack, len(ps.packs))
	for _, p := range ps.packs {
		known[p.sum] = p
	}
	packs := make([]*diskPack, 0, len(bases))
	for _, base := range bases {
		sum, ok := packSum(base)
		if !ok {
			continue
		}
		if p := known[sum]; p != nil {
			packs = append(packs, p)
			delete(known, sum)
			continue
		}
		idx, err := openDiskIndex(filepath.Join(ps.dir, base+".idx"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by a repack since the listing
		}
		if err != nil {
			return err
		}
		if idx.packChecksum() != sum {
			return fmt.Errorf("pack index %s.idx: it indexes pack %s", base, idx.packChecksum())
		}
		packs = append(packs, &diskPack{sum: sum, idx: idx})
	}
	for _, p := range known {
		ps.closePack(p)
		ps.unplace(p)
	}
	slices.SortStableFunc(packs, func(a, b *diskPack) int { return b.idx.n - a.idx.n })
	ps.packs, ps.stale = packs, false
	return nil
}

// add makes the pack sum, just written by this process with the index
// file idx, readable without listing the pack directory: a commit's own
// pack is one more small pack, and listing the directory then reading
// each new index file is what a daemon under appends did every few
// hundred commits. When the directory is to be listed anyway, that
// finds it.
func (ps *packSet) add(sum plumbing.Hash, idx []byte) error {
	if ps.stale || slices.ContainsFunc(ps.packs, func(p *diskPack) bool { return p.sum == sum }) {
		return nil // listed next, or the same pack written again
	}
	x, err := newDiskIndex(idx)
	if err != nil {
		return fmt.Errorf("pack index of %s: %w", sum, err)
	}
	if x.packChecksum() != sum {
		return fmt.Errorf("pack index of %s: it indexes pack %s", sum, x.packChecksum())
	}
	if x.n <= compactMax {
		x.compact()
	}
	// Largest first: a commit's pack goes among the smallest.
	i, _ := slices.BinarySearchFunc(ps.packs, x.n, func(p *diskPack, n int) int { return n - p.idx.n })
	for i < len(ps.packs) && ps.packs[i].idx.n == x.n {
		i++
	}
	p := &diskPack{sum: sum, idx: x}
	ps.packs = slices.Insert(ps.packs, i, p)
	ps.place(p)
	return nil
}

// place names p's objects in where, if there is room.
func (ps *packSet) place(p *diskPack) {
	if len(ps.where)+p.idx.n > whereMax {
		return
	}
	if ps.where == nil {
		ps.where = map[plumbing.Hash]*diskPack{}
	}
	for i := range p.idx.n {
		ps.where[p.idx.hash(i)] = p
	}
	p.placed = true
}

// unplace removes p's objects from where.
func (ps *packSet) unplace(p *diskPack) {
	if !p.placed {
		return
	}
	for i := range p.idx.n {
		if h := p.idx.hash(i); ps.where[h] == p {
			delete(ps.where, h)
		}
	}
	p.placed = false
}

// packSum is the checksum a pack's base name ("pack-<sum>") gives.
func packSum(base string) (plumbing.Hash, bool) {
	hex, ok := strings.CutPrefix(base, "pack-")
	if !ok || !plumbing.IsHash(hex) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(hex), true
}

// ready lists the pack directory if it has to be.
func (ps *packSet) ready() error {
	if !ps.stale {
		return nil
	}
	return ps.refresh()
}

// find returns the pack that holds h and h's offset in it.
func (ps *packSet) find(h plumbing.Hash) (*diskPack, int64, error) {
	if err := ps.ready(); err != nil {
		return nil, 0, err
	}
	if p := ps.where[h]; p != nil {
		if i := p.idx.search(h); i >= 0 {
			off, err := p.idx.offset(i)
			return p, off, err
		}
	}
	for _, p := range ps.packs {
		if i := p.idx.search(h); i >= 0 {
			off, err := p.idx.offset(i)
			return p, off, err
		}
	}
	return nil, 0, plumbing.ErrObjectNotFound
}

// writtenCacheSize is how many bytes of the blobs it wrote a packSet
// keeps: the daily logs of a thousand users appended to in turn (7.5 MB
// of text after 100k appends).
const writtenCacheSize = 16 << 20

// writtenBlobs keeps the latest blob written at each path, up to
// writtenCacheSize bytes in all (past it, it starts again empty): a
// version a later commit replaced is let go of, so it holds the files
// as they are, not their history, and appends that come back to each
// log in turn find it (an LRU that the logs outgrow finds none).
type writtenBlobs struct {
	byPath newest[string, plumbing.Hash] // in bytes of the blobs
	byHash map[plumbing.Hash]*plumbing.MemoryObject
}

func (w *writtenBlobs) get(h plumbing.Hash) (plumbing.EncodedObject, bool) {
	o, ok := w.byHash[h]
	return o, ok
}

// put keeps blob o, written at path p, in place of the one before.
func (w *writtenBlobs) put(p string, o *plumbing.MemoryObject) {
	old, replaced, emptied := w.byPath.put(p, o.Hash(), int(o.Size()), writtenCacheSize)
	switch {
	case emptied || w.byHash == nil:
		w.byHash = map[plumbing.Hash]*plumbing.MemoryObject{}
	case replaced:
		delete(w.byHash, old)
	}
	if _, kept := w.byPath.get(p); kept {
		w.byHash[o.Hash()] = o
	}
}

// cached returns object h if a cache holds it.
func (ps *packSet) cached(h plumbing.Hash) (plumbing.EncodedObject, bool) {
	if o, ok := ps.cache.Get(h); ok {
		return o, true
	}
	return ps.written.get(h)
}

// wrote keeps the objects of a pack just written: all in the cache, the
// blobs that names gives a path in written too.
func (ps *packSet) wrote(objs []*plumbing.MemoryObject, names map[plumbing.Hash]string) {
	for _, o := range objs {
		ps.cache.Put(o)
		if p, ok := names[o.Hash()]; ok && o.Type() == plumbing.BlobObject {
			ps.written.put(p, o)
		}
	}
}

// get reads object h. An object in a cache is not looked for in the
// packs: it was read from one or written to one, and names its content.
func (ps *packSet) get(h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := ps.cached(h); ok {
		return o, nil
	}
	p, _, err := ps.find(h)
	if err != nil {
		return nil, err
	}
	pf, err := ps.file(p)
	if err != nil {
		return nil, err
	}
	return pf.Get(h)
}

// size is object h's inflated size.
func (ps *packSet) size(h plumbing.Hash) (int64, error) {
	if o, ok := ps.cached(h); ok {
		return o.Size(), nil
	}
	p, off, err := ps.find(h)
	if err != nil {
		return 0, err
	}
	pf, err := ps.file(p)
	if err != nil {
		return 0, err
	}
	return pf.GetSizeByOffset(off)
}

// file returns p's pack reader, opening the file; past maxOpenPacks,
// the least recently used one is closed.
func (ps *packSet) file(p *diskPack) (*packfile.Packfile, error) {
	if i := slices.Index(ps.open, p); i >= 0 {
		ps.open = append(slices.Delete(ps.open, i, i+1), p)
		return p.pf, nil
	}
	f, err := ps.fs.Open(path.Join(packDir, "pack-"+p.sum.String()+".pack"))
	if err != nil {
		return nil, err
	}
	p.pf = packfile.NewPackfileWithCache(p.idx, ps.fs, f, ps.cache, 0)
	ps.open = append(ps.open, p)
	if len(ps.open) > maxOpenPacks {
		ps.closePack(ps.open[0])
	}
	return p.pf, nil
}

// closePack closes p's file if it is open.
func (ps *packSet) closePack(p *diskPack) error {
	i := slices.Index(ps.open, p)
	if i < 0 {
		return nil
	}
	ps.open = slices.Delete(ps.open, i, i+1)
	pf := p.pf
	p.pf = nil
	return pf.Close()
}

// close closes every open pack file and has the directory listed again
// before the next read.
func (ps *packSet) close() error {
	var errs []error
	for len(ps.open) > 0 {
		errs = append(errs, ps.closePack(ps.open[0]))
	}
	ps.stale = true
	return errors.Join(errs...)
}
