package o200k

import "math"

// Bounds of a pieceCache's table: a text of n bytes gets about n/4 slots
// (a piece is four bytes on average), within these.
const (
	minCacheBits  = 6
	maxCacheBits  = 12
	maxCacheProbe = 8
)

// pieceCache remembers the token count of each distinct piece of one
// text, so a word that recurs is looked up in the vocabulary, or merged,
// once. It is an open-addressing table keyed by the piece's first eight
// bytes and length, which are the whole piece for most pieces; a longer
// piece is compared with its first occurrence in the text, so counts stay
// exact.
type pieceCache struct {
	slots []cacheSlot
	shift uint // 64 - log2(len(slots))
	free  int  // slots that may still be filled, keeping probes short
}

type cacheSlot struct {
	word  uint64 // the piece's first eight bytes, little-endian
	off   uint32 // a longer piece is text[off : off+size]
	size  uint16 // 0: an empty slot
	count uint16
}

// reset empties c for a text of n bytes.
func (c *pieceCache) reset(n int) {
	b := uint(minCacheBits)
	for b < maxCacheBits && 1<<b < n/4 {
		b++
	}
	slots := 1 << b
	if cap(c.slots) < slots {
		c.slots = make([]cacheSlot, slots)
	} else {
		c.slots = c.slots[:slots]
		clear(c.slots)
	}
	c.shift, c.free = 64-b, slots*3/4
}

// word returns the first eight bytes of text[i:e] (fewer if it is
// shorter, the rest zero) as a little-endian number.
func word(text string, i, e int) uint64 {
	if i+8 <= len(text) {
		b := text[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if n := uint(e - i); n < 8 {
			w &= 1<<(8*n) - 1
		}
		return w
	}
	var w uint64
	for k := min(e, i+8) - 1; k >= i; k-- {
		w = w<<8 | uint64(text[k])
	}
	return w
}

// count returns the number of tokens of the piece text[i:e].
func (c *pieceCache) count(text string, i, e int) int {
	n := e - i
	if n == 1 {
		return 1 // every byte is a token
	}
	var w uint64
	if i+8 <= len(text) { // word(text, i, e), inline
		b := text[i : i+8]
		w = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if n < 8 {
			w &= 1<<(8*uint(n)) - 1
		}
	} else {
		w = word(text, i, e)
	}
	var h uint64 // vocabHash(text[i:e])
	if n <= 8 {
		h = mixHash(w, n)
	} else {
		h = longHash(text[i:e])
	}
	slots := c.slots
	mask := len(slots) - 1
	p := int(h>>c.shift) & mask
	for range maxCacheProbe {
		s := &slots[p]
		if s.size == 0 {
			return c.add(s, text, i, e, w, h)
		}
		if s.word == w && int(s.size) == n && (n <= 8 || text[s.off:s.off+uint32(s.size)] == text[i:e]) {
			return int(s.count)
		}
		p = (p + 1) & mask
	}
	return countPiece(text[i:e], h)
}

// add counts the piece text[i:e], whose first bytes are w and vocabHash
// h, and keeps its count in s, an empty slot, while the table has room.
func (c *pieceCache) add(s *cacheSlot, text string, i, e int, w, h uint64) int {
	count := countPiece(text[i:e], h)
	if c.free > 0 && e <= math.MaxUint32 && e-i <= math.MaxUint16 && count <= math.MaxUint16 {
		*s = cacheSlot{word: w, off: uint32(i), size: uint16(e - i), count: uint16(count)}
		c.free--
	}
	return count
}

// countPiece is the number of tokens of piece, whose vocabHash is h: one
// if it is in the vocabulary, else what byte-pair merging makes of it.
func countPiece(piece string, h uint64) int {
	if _, ok := rankHashed(piece, h); ok {
		return 1
	}
	return mergeCount(piece)
}
