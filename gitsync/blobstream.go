package gitsync

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// blobStreams compresses the blobs of a commit's own pack that have a
// path, keeping for each path the blob last packed there and its deflate
// stream without its final block (non-final blocks ending on a byte
// boundary). A blob that extends that one byte for byte (a daily log an
// append added an entry to) is the kept stream, then the added bytes on
// their own (a stored block when short, deflated otherwise), then a
// final empty block and the whole content's adler32: a valid zlib stream
// that costs the added bytes, not the whole file's compression. Go's
// zlib.BestSpeed ignores a preset dictionary, so deflated additions lose
// only the matches into the content before them; the stream is deflated
// whole again once they cost more than spliceSlack allows. Not safe for
// concurrent use.
type blobStreams struct {
	byPath newest[string, *blobStream] // in bytes of blobs and streams
	fw     *flate.Writer
	// cur and prev are buffers the blob written and the one before at
	// its path are read into: the blobs themselves are kept by the
	// packSet too (packSet.written), a copy of their content would
	// double what the logs take.
	cur, prev []byte
}

// blobStream is the blob last packed at a path.
type blobStream struct {
	blob *plumbing.MemoryObject
	// deflated is the blob's content as raw deflate blocks, none final, ending on
	// a byte boundary (a sync flush or a stored block).
	deflated []byte
	adler    uint32 // adler32 of the content
	// whole is the length of deflated when the content was last deflated
	// whole: the added bytes, deflated on their own, compress worse.
	whole int
}

// spliceSlack and minSlack bound what splices cost in pack bytes: once
// the bytes spliced onto a stream deflated whole pass a quarter of it
// (and minSlack), the next version is deflated whole again. The lines of
// a log compress to about half as much in the context of the ones
// before; stored, not at all.
const spliceSlack, minSlack = 4, 1024

// spliceable reports whether s's stream can take another splice.
func (s *blobStream) spliceable() bool {
	return len(s.deflated)-s.whole <= max(s.whole/spliceSlack, minSlack)
}

// blobStreamsSize is how many bytes of contents and streams blobStreams
// keeps (past it, it starts again empty): the daily logs of a thousand
// users appended to in turn, as packSet.written keeps them.
const blobStreamsSize = 2 * writtenCacheSize

// zlibHeader is a zlib header (deflate, 32 KiB window, fastest level);
// finalBlock is an empty final block with fixed Huffman codes.
var (
	zlibHeader = []byte{0x78, 0x01}
	finalBlock = []byte{0x03, 0x00}
)

// write writes blob o, packed at path, to w as a zlib stream and keeps
// it as path's blob.
func (z *blobStreams) write(w io.Writer, path string, o *plumbing.MemoryObject) error {
	content, err := readBlob(o, &z.cur)
	if err != nil {
		return err
	}
	prev, _ := z.byPath.get(path)
	var prevContent []byte
	if prev != nil {
		if prevContent, err = readBlob(prev.blob, &z.prev); err != nil {
			return err
		}
	}
	s, err := z.next(prev, prevContent, content)
	if err != nil {
		return err
	}
	s.blob = o
	var tail [6]byte
	copy(tail[:], finalBlock)
	binary.BigEndian.PutUint32(tail[2:], s.adler)
	for _, b := range [][]byte{zlibHeader, s.deflated, tail[:]} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	z.keep(path, s)
	return nil
}

// readBlob reads o's content into *buf (grown as needed; a blob of
// more than a MiB gets a buffer of its own).
func readBlob(o *plumbing.MemoryObject, buf *[]byte) ([]byte, error) {
	n := int(o.Size())
	var b []byte
	if n > 1<<20 {
		b = make([]byte, n)
	} else {
		*buf = slices.Grow((*buf)[:0], n)[:n]
		b = *buf
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	_, err = io.ReadFull(r, b)
	return b, err
}

// next is the stream of content: prev's (whose content is prevContent)
// with the added bytes spliced on when content extends prevContent
// (within spliceSlack), content deflated whole otherwise. prev's stream
// may be appended to in place: prev is let go.
func (z *blobStreams) next(prev *blobStream, prevContent, content []byte) (*blobStream, error) {
	if prev == nil || !bytes.HasPrefix(content, prevContent) || !prev.spliceable() {
		d, err := z.deflate(nil, content)
		return &blobStream{deflated: d, adler: adler32.Checksum(content), whole: len(d)}, err
	}
	added := content[len(prevContent):]
	if len(added) == 0 {
		return &blobStream{deflated: prev.deflated, adler: prev.adler, whole: prev.whole}, nil
	}
	d, err := z.splice(prev.deflated, added)
	if err != nil {
		return nil, err
	}
	return &blobStream{deflated: d, adler: adler32Update(prev.adler, added), whole: prev.whole}, nil
}

// maxStoredSplice is the most added bytes spliced on as a stored block:
// an append's entry of a hundred bytes deflated on its own saves a few
// bytes, for a Huffman code built and sent with it (the fixed cost of
// deflating a block, most of deflating a small file whole).
const maxStoredSplice = 512

// splice appends added to stream dst: as a stored block when short,
// deflated otherwise.
func (z *blobStreams) splice(dst, added []byte) ([]byte, error) {
	if len(added) > maxStoredSplice {
		return z.deflate(dst, added)
	}
	n := len(added)
	dst = append(dst, 0, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
	return append(dst, added...), nil
}

// deflate appends p to dst as raw deflate blocks ending with a sync
// flush, at BestSpeed.
func (z *blobStreams) deflate(dst, p []byte) ([]byte, error) {
	sw := &sliceWriter{b: dst}
	if z.fw == nil {
		var err error
		if z.fw, err = flate.NewWriter(sw, flate.BestSpeed); err != nil {
			return nil, err
		}
	} else {
		z.fw.Reset(sw)
	}
	if _, err := z.fw.Write(p); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	if err := z.fw.Flush(); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	return sw.b, nil
}

// keep makes s path's blob, within blobStreamsSize.
func (z *blobStreams) keep(path string, s *blobStream) {
	z.byPath.put(path, s, int(s.blob.Size())+cap(s.deflated), blobStreamsSize)
}

// adler32Update is the adler32 checksum of a content whose checksum is
// sum followed by p (as hash/adler32 computes it, from a given state).
func adler32Update(sum uint32, p []byte) uint32 {
	const mod, nmax = 65521, 5552 // nmax: the most bytes before s2 could overflow
	s1, s2 := sum&0xffff, sum>>16
	for len(p) > 0 {
		n := min(len(p), nmax)
		for _, b := range p[:n] {
			s1 += uint32(b)
			s2 += s1
		}
		s1, s2 = s1%mod, s2%mod
		p = p[n:]
	}
	return s2<<16 | s1
}

// sliceWriter appends what is written to b.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// storedTrees writes the trees of a commit's own pack as zlib streams of
// stored blocks (see packZlib), keeping for each directory the tree last
// packed there and its adler32: the next tree of that directory, the
// same length with a few object names changed in place (a commit to one
// of a thousand users' directories), has its checksum updated from the
// bytes that differ instead of summed again. Not safe for concurrent
// use.
type storedTrees struct {
	byDir newest[string, *storedTree] // in bytes of content
	spare []byte                      // a buffer to read the next tree into
}

// storedTree is the tree last packed at a directory.
type storedTree struct {
	content []byte
	adler   uint32
}

// storedTreesSize is how many bytes of trees storedTrees keeps (past it,
// it starts again empty).
const storedTreesSize = 8 << 20

// maxStored is the most bytes a stored deflate block holds.
const maxStored = 0xffff

// write writes tree o, packed at directory dir, to w and keeps it as
// dir's tree.
func (z *storedTrees) write(w io.Writer, dir string, o *plumbing.MemoryObject) error {
	r, err := o.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	content := z.buffer(int(o.Size()))
	if _, err := io.ReadFull(r, content); err != nil {
		return err
	}
	prev, _ := z.byDir.get(dir)
	sum := adler32Since(prev, content)
	if err := writeStored(w, content, sum); err != nil {
		return err
	}
	z.keep(dir, &storedTree{content: content, adler: sum})
	return nil
}

// buffer is a buffer of n bytes: the spare one when it is about that
// size (the tree a directory had before), a new one otherwise. A tree
// keeps its buffer, so a small one must not keep a large one's.
func (z *storedTrees) buffer(n int) []byte {
	b := z.spare
	z.spare = nil
	if cap(b) < n || cap(b) > n+n/4+64 {
		return make([]byte, n)
	}
	return b[:n]
}

// adler32Since is content's adler32: prev's updated for the bytes that
// differ when content is as long as prev's content, summed whole
// otherwise.
func adler32Since(prev *storedTree, content []byte) uint32 {
	if prev == nil || len(prev.content) != len(content) {
		return adler32.Checksum(content)
	}
	const mod, chunk = 65521, 256
	n := len(content)
	s1, s2 := prev.adler&0xffff, prev.adler>>16
	for at := 0; at < n; at += chunk {
		end := min(at+chunk, n)
		if bytes.Equal(content[at:end], prev.content[at:end]) {
			continue
		}
		for i := at; i < end; i++ {
			// Byte i adds itself to s1 and n-i times itself to s2.
			d := (uint32(content[i]) + mod - uint32(prev.content[i])) % mod
			s1 = (s1 + d) % mod
			s2 = uint32((uint64(s2) + uint64(n-i)%mod*uint64(d)) % mod)
		}
	}
	return s2<<16 | s1
}

// writeStored writes content to w as a zlib stream of stored blocks
// whose checksum is sum.
func writeStored(w io.Writer, content []byte, sum uint32) error {
	if _, err := w.Write(zlibHeader); err != nil {
		return err
	}
	for first := true; first || len(content) > 0; first = false {
		n := min(len(content), maxStored)
		var head [5]byte
		if n == len(content) {
			head[0] = 1 // the final block
		}
		binary.LittleEndian.PutUint16(head[1:], uint16(n))
		binary.LittleEndian.PutUint16(head[3:], ^uint16(n))
		if _, err := w.Write(head[:]); err != nil {
			return err
		}
		if _, err := w.Write(content[:n]); err != nil {
			return err
		}
		content = content[n:]
	}
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], sum)
	_, err := w.Write(tail[:])
	return err
}

// keep makes t dir's tree, within storedTreesSize; the tree it replaces
// becomes the spare buffer.
func (z *storedTrees) keep(dir string, t *storedTree) {
	if old, ok, _ := z.byDir.put(dir, t, cap(t.content), storedTreesSize); ok {
		z.spare = old.content
	}
}
