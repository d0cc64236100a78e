package gitsync

import (
	"github.com/quirehq/quire/internal/mapfile"

	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// diskIndex is a pack index (.idx, version 2) read in place: lookups
// search the file's own tables (mapped into memory where the system
// allows, see mapFile) instead of go-git's MemoryIndex, which copies
// every name, offset and CRC onto the heap and, on the first lookup by
// offset, builds a map of every offset to its name. The lookup by
// offset here is a list of the entries' positions sorted by offset (4
// bytes an object), built on first use. It is safe for concurrent use.
type diskIndex struct {
	data   []byte // the whole file (once compact, from the names on)
	n      int
	fanout []byte // 256 big-endian counts; nil once compact
	// firsts has bit b set when a name begins with byte b, once compact:
	// a look-up tries every pack in turn, and most packs are a commit's
	// own handful of objects, so most look-ups in one are misses.
	firsts [4]uint64
	names  []byte // n × 20
	crcs   []byte // n × 4
	offs   []byte // n × 4
	large  []byte // the 8-byte offsets the 4-byte ones point to

	byOffsetOnce sync.Once
	byOffset     []uint32 // entry positions sorted by offset
	byOffsetErr  error
}

var _ idxfile.Index = (*diskIndex)(nil)

// newDiskIndex checks b's layout (magic, version, a fan-out that never
// decreases, tables that fit) and indexes it. Its checksums are not
// verified here (go-git does not either; Verify does).
func newDiskIndex(b []byte) (*diskIndex, error) {
	if len(b) < idxHeader+2*20 || !bytes.Equal(b[:4], []byte("\xfftOc")) || binary.BigEndian.Uint32(b[4:8]) != 2 {
		return nil, errIdxFormat
	}
	fanout := b[8:idxHeader]
	prev := uint32(0)
	for i := range 256 {
		c := binary.BigEndian.Uint32(fanout[i*4:])
		if c < prev {
			return nil, fmt.Errorf("%w: its fan-out table decreases", errIdxFormat)
		}
		prev = c
	}
	n := int(prev)
	tables := idxHeader + n*(20+4+4)
	if n < 0 || tables+2*20 > len(b) || (len(b)-40-tables)%8 != 0 {
		return nil, fmt.Errorf("%w: %d objects do not fit in %d bytes", errIdxFormat, n, len(b))
	}
	x := &diskIndex{data: b, n: n, fanout: fanout}
	x.names = b[idxHeader : idxHeader+n*20]
	x.crcs = b[idxHeader+n*20 : idxHeader+n*24]
	x.offs = b[idxHeader+n*24 : tables]
	x.large = b[tables : len(b)-40]
	return x, nil
}

// packChecksum is the checksum of the pack the index belongs to.
func (x *diskIndex) packChecksum() (h plumbing.Hash) {
	copy(h[:], x.data[len(x.data)-40:])
	return h
}

// compactMax is the most objects an index read onto the heap may name
// to be kept without its header and fan-out table (1 KiB): most packs
// are a commit's own, of a handful of objects, and a daemon may hold
// thousands of them between repacks.
const compactMax = 64

// compact keeps x's tables and checksums in a copy of their own, without
// the header and fan-out table; lookups then search every name.
func (x *diskIndex) compact() {
	b := bytes.Clone(x.data[idxHeader:])
	n := x.n
	tables := n * (20 + 4 + 4)
	x.data, x.fanout = b, nil
	x.names, x.crcs, x.offs = b[:n*20], b[n*20:n*24], b[n*24:tables]
	x.large = b[tables : len(b)-40]
	x.firsts = [4]uint64{}
	for i := range n {
		c := x.names[i*20]
		x.firsts[c>>6] |= 1 << (c & 63)
	}
}

// search returns the position of h, or -1.
func (x *diskIndex) search(h plumbing.Hash) int {
	lo, hi := 0, x.n
	if x.fanout != nil {
		if h[0] > 0 {
			lo = int(binary.BigEndian.Uint32(x.fanout[(int(h[0])-1)*4:]))
		}
		hi = int(binary.BigEndian.Uint32(x.fanout[int(h[0])*4:]))
	} else if x.firsts[h[0]>>6]&(1<<(h[0]&63)) == 0 {
		return -1
	}
	// Names are compared by their first 8 bytes as a number, then by
	// the rest: the same order as bytes.Compare, without its call.
	key := binary.BigEndian.Uint64(h[:8])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		name := x.names[m*20 : m*20+20]
		c := cmpUint64(binary.BigEndian.Uint64(name), key)
		if c == 0 {
			c = bytes.Compare(name[8:], h[8:])
		}
		switch {
		case c == 0:
			return m
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// offset is the offset of the entry at position i.
func (x *diskIndex) offset(i int) (int64, error) {
	o := binary.BigEndian.Uint32(x.offs[i*4:])
	if o&0x80000000 == 0 {
		return int64(o), nil
	}
	j := int(o&0x7fffffff) * 8
	if j+8 > len(x.large) {
		return 0, fmt.Errorf("%w: a large offset lies outside the file", errIdxFormat)
	}
	return int64(binary.BigEndian.Uint64(x.large[j:])), nil
}

func (x *diskIndex) hash(i int) (h plumbing.Hash) {
	copy(h[:], x.names[i*20:])
	return h
}

// Contains reports whether the pack holds h.
func (x *diskIndex) Contains(h plumbing.Hash) (bool, error) {
	return x.search(h) >= 0, nil
}

// FindOffset is h's offset in the pack.
func (x *diskIndex) FindOffset(h plumbing.Hash) (int64, error) {
	i := x.search(h)
	if i < 0 {
		return 0, plumbing.ErrObjectNotFound
	}
	return x.offset(i)
}

// FindCRC32 is the CRC-32 of h's entry in the pack.
func (x *diskIndex) FindCRC32(h plumbing.Hash) (uint32, error) {
	i := x.search(h)
	if i < 0 {
		return 0, plumbing.ErrObjectNotFound
	}
	return binary.BigEndian.Uint32(x.crcs[i*4:]), nil
}

// FindHash is the name of the object at offset o.
func (x *diskIndex) FindHash(o int64) (plumbing.Hash, error) {
	pos, err := x.sortedByOffset()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	lo, hi := 0, len(pos)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		mo, _ := x.offset(int(pos[m])) // checked by sortedByOffset
		switch {
		case mo == o:
			return x.hash(int(pos[m])), nil
		case mo < o:
			lo = m + 1
		default:
			hi = m
		}
	}
	return plumbing.ZeroHash, plumbing.ErrObjectNotFound
}

// sortedByOffset returns the entries' positions sorted by offset,
// building the list on first use.
func (x *diskIndex) sortedByOffset() ([]uint32, error) {
	x.byOffsetOnce.Do(func() { x.byOffset, x.byOffsetErr = x.buildByOffset() })
	return x.byOffset, x.byOffsetErr
}

func (x *diskIndex) buildByOffset() ([]uint32, error) {
	if len(x.large) == 0 {
		// Every offset fits in 31 bits: sort offset and position
		// packed into one integer.
		keys := make([]uint64, x.n)
		for i := range keys {
			keys[i] = uint64(binary.BigEndian.Uint32(x.offs[i*4:]))<<32 | uint64(i)
		}
		slices.Sort(keys)
		pos := make([]uint32, x.n)
		for i, k := range keys {
			pos[i] = uint32(k)
		}
		return pos, nil
	}
	type entry struct {
		off int64
		pos uint32
	}
	es := make([]entry, x.n)
	for i := range es {
		o, err := x.offset(i)
		if err != nil {
			return nil, err
		}
		es[i] = entry{o, uint32(i)}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.off, b.off) })
	pos := make([]uint32, x.n)
	for i, e := range es {
		pos[i] = e.pos
	}
	return pos, nil
}

// lastOffset is the largest offset of an object in the pack (0 when
// there is none).
func (x *diskIndex) lastOffset() (int64, error) {
	var last int64
	for i := range x.n {
		o, err := x.offset(i)
		if err != nil {
			return 0, err
		}
		last = max(last, o)
	}
	return last, nil
}

// Count is the number of objects in the pack.
func (x *diskIndex) Count() (int64, error) { return int64(x.n), nil }

// Entries lists the entries by name.
func (x *diskIndex) Entries() (idxfile.EntryIter, error) {
	return &diskEntries{x: x}, nil
}

// EntriesByOffset lists the entries by offset.
func (x *diskIndex) EntriesByOffset() (idxfile.EntryIter, error) {
	pos, err := x.sortedByOffset()
	if err != nil {
		return nil, err
	}
	return &diskEntries{x: x, pos: pos}, nil
}

// diskEntries iterates over a diskIndex's entries, in the order of pos
// when it is set.
type diskEntries struct {
	x   *diskIndex
	pos []uint32
	i   int
}

func (it *diskEntries) Next() (*idxfile.Entry, error) {
	if it.i >= it.x.n {
		return nil, io.EOF
	}
	j := it.i
	if it.pos != nil {
		j = int(it.pos[it.i])
	}
	it.i++
	o, err := it.x.offset(j)
	if err != nil {
		return nil, err
	}
	return &idxfile.Entry{Hash: it.x.hash(j), CRC32: binary.BigEndian.Uint32(it.x.crcs[j*4:]), Offset: uint64(o)}, nil
}

func (it *diskEntries) Close() error {
	it.i = it.x.n
	return nil
}

// mapMin is the size from which a pack index is mapped rather than
// read: a smaller one (a commit's own pack indexes a handful of
// objects) would take a page of its own and a mapping for a few hundred
// bytes.
const mapMin = 64 << 10

// openDiskIndex opens the pack index at path. A mapped index is
// unmapped once nothing refers to it any more (go-git's objects read
// from a pack later hold the pack's index).
func openDiskIndex(path string) (*diskIndex, error) {
	b, release, err := mapfile.Read(path, mapMin)
	if err != nil {
		return nil, err
	}
	x, err := newDiskIndex(b)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, fmt.Errorf("pack index %s: %w", path, err)
	}
	if release != nil {
		runtime.AddCleanup(x, func(release func()) { release() }, release)
	} else if x.n <= compactMax {
		x.compact()
	}
	return x, nil
}

// openCheckedIndex opens the pack index at path as openDiskIndex does,
// having checked its own checksum first (reading it whole): for
// decisions that must not trust a damaged index, such as which packs a
// repack made redundant.
func openCheckedIndex(path string) (*diskIndex, error) {
	b, release, err := mapfile.Read(path, mapMin)
	if err != nil {
		return nil, err
	}
	if release != nil {
		defer func() {
			if err != nil {
				release()
			}
		}()
	}
	x, err := newDiskIndex(b)
	if err != nil {
		return nil, err
	}
	if err = checkIdxChecksum(b); err != nil {
		return nil, err
	}
	if release != nil {
		runtime.AddCleanup(x, func(release func()) { release() }, release)
	}
	return x, nil
}
