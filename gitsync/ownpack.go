package gitsync

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeOwnPack writes objs to w as a version 2 pack without deltas and
// returns the pack's checksum and its index file's content, built from
// what was written: a commit's own pack is not parsed back (inflated and
// hashed again) to index it. Its objects are compressed by zs (nil: new
// compressors); a blob that names gives a path goes through zs's
// blobStreams. The pack's checksum is plain SHA-1, as git's own
// checksums of the files it writes are: collision detection guards
// object names, and costs several times plain SHA-1's CPU.
func writeOwnPack(w io.Writer, objs []*plumbing.MemoryObject, names map[plumbing.Hash]string, zs *packZlib) (plumbing.Hash, []byte, error) {
	if zs == nil {
		zs = new(packZlib)
	}
	sum := sha1.New()
	bw := zs.buffer(io.MultiWriter(w, sum))
	var pos int64
	head := []byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(head[8:], uint32(len(objs)))
	bw.Write(head)
	pos += int64(len(head))
	es := make([]idxEntry, 0, len(objs))
	crc := crc32.NewIEEE()
	counted := &countWriter{w: io.MultiWriter(bw, crc)}
	for _, o := range objs {
		crc.Reset()
		counted.n = 0
		counted.Write(entryHeader(o.Type(), o.Size()))
		if err := zs.write(counted, o, names); err != nil {
			return plumbing.ZeroHash, nil, fmt.Errorf("pack object %s: %w", o.Hash(), err)
		}
		es = append(es, idxEntry{hash: o.Hash(), offset: pos, crc: crc.Sum32()})
		pos += counted.n
	}
	if err := bw.Flush(); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var h plumbing.Hash
	copy(h[:], sum.Sum(nil))
	if _, err := w.Write(h[:]); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return h, encodePackIndex(es, h), nil
}

// entryHeader is a pack entry's type and size: the type and the low four
// bits of the size first, then seven bits a byte, the high bit saying
// another follows.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// packZlib compresses the objects of a commit's own pack, keeping its
// compressors from one pack to the next (a compressor is some hundred
// KiB to allocate). Blobs are compressed at zlib.BestSpeed, those with
// a path through blobs (spliced onto the version before). Trees are
// stored: their object names (20 random bytes an entry) leave Huffman
// coding alone to save about a quarter of a tree, at tens of times the
// CPU of storing it, and the tree of a directory with many files is
// rewritten by every commit in it. Commits are stored too: a few hundred
// bytes deflated save a hundred for the fixed cost of a Huffman code
// (8 µs, more than compressing the rest of an append's pack). git repack
// compresses what it keeps whole with deltas and at its own level.
type packZlib struct {
	fast, stored *zlib.Writer
	blobs        blobStreams
	trees        storedTrees
	bw           *bufio.Writer // the pack's buffer
}

// write writes o's content compressed to w, a blob with a path in names
// through z.blobs.
func (z *packZlib) write(w io.Writer, o *plumbing.MemoryObject, names map[plumbing.Hash]string) error {
	r, err := o.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	p, ok := names[o.Hash()]
	if ok && o.Type() == plumbing.TreeObject {
		return z.trees.write(w, p, o)
	}
	if ok && o.Type() == plumbing.BlobObject {
		return z.blobs.write(w, p, o)
	}
	if o.Type() == plumbing.CommitObject {
		content, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return writeStored(w, content, adler32.Checksum(content))
	}
	zw := z.writer(o.Type(), w)
	if _, err := io.Copy(zw, r); err != nil {
		return err
	}
	return zw.Close()
}

// buffer returns the pack's buffer, reset to write to w: 64 KiB to
// allocate and clear at every commit otherwise.
func (z *packZlib) buffer(w io.Writer) *bufio.Writer {
	if z.bw == nil {
		z.bw = bufio.NewWriterSize(w, 64<<10)
	} else {
		z.bw.Reset(w)
	}
	return z.bw
}

// writer returns the compressor for an object of type t, reset to write
// to w.
func (z *packZlib) writer(t plumbing.ObjectType, w io.Writer) *zlib.Writer {
	zw, level := &z.fast, zlib.BestSpeed
	if t == plumbing.TreeObject {
		zw, level = &z.stored, zlib.NoCompression
	}
	if *zw == nil {
		*zw, _ = zlib.NewWriterLevel(w, level)
	} else {
		(*zw).Reset(w)
	}
	return *zw
}
