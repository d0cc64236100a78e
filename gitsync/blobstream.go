package gitsync

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
)

// blobStreams compresses the blobs of a commit's own pack that have a
// path, keeping for each path the blob last packed there and its deflate
// stream cut at a sync flush (non-final blocks ending on a byte
// boundary). A blob that extends that one byte for byte (a daily log an
// append added lines to) is the kept stream, then the added bytes
// deflated on their own, then a final empty block: a valid zlib stream
// that costs the added bytes' compression, not the whole file's, at
// zlib.BestSpeed (which ignores a preset dictionary, so the suffix
// loses nothing it could have had). Not safe for concurrent use.
type blobStreams struct {
	byPath map[string]*blobStream
	size   int // bytes of content and streams kept
	fw     *flate.Writer
}

// blobStream is the blob last packed at a path.
type blobStream struct {
	content []byte
	// deflated is content as raw deflate blocks, none final, the last a
	// sync flush's empty stored block.
	deflated []byte
	adler    uint32 // adler32 of content
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

// write writes content, the blob packed at path, to w as a zlib stream
// and keeps it as path's blob.
func (z *blobStreams) write(w io.Writer, path string, content []byte) error {
	s, err := z.next(z.byPath[path], content)
	if err != nil {
		return err
	}
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

// next is content's stream: prev's with content's added bytes deflated
// after it when content extends prev's content, content deflated whole
// otherwise. prev's stream may be appended to in place: prev is let go.
func (z *blobStreams) next(prev *blobStream, content []byte) (*blobStream, error) {
	if prev == nil || !bytes.HasPrefix(content, prev.content) {
		d, err := z.deflate(nil, content)
		return &blobStream{content: content, deflated: d, adler: adler32.Checksum(content)}, err
	}
	added := content[len(prev.content):]
	if len(added) == 0 {
		return &blobStream{content: content, deflated: prev.deflated, adler: prev.adler}, nil
	}
	d, err := z.deflate(prev.deflated, added)
	if err != nil {
		return nil, err
	}
	return &blobStream{content: content, deflated: d, adler: adler32Update(prev.adler, added)}, nil
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
	if old, ok := z.byPath[path]; ok {
		z.size -= len(old.content) + len(old.deflated)
		delete(z.byPath, path)
	}
	n := len(s.content) + len(s.deflated)
	if n > blobStreamsSize/4 {
		return
	}
	if z.byPath == nil || z.size+n > blobStreamsSize {
		z.byPath, z.size = map[string]*blobStream{}, 0
	}
	z.byPath[path] = s
	z.size += n
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
