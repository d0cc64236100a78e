package o200k

import "math"

// Bounds of a pieceCache: its table starts with 1<<minCacheBits slots and
// doubles while it fills, up to 1<<maxCacheBits (16 bytes each); the text
// of its pieces longer than eight bytes takes up to maxArenaBytes. Past
// either bound it starts over.
const (
	minCacheBits  = 12
	maxCacheBits  = 14
	maxCacheProbe = 8
	minArenaBytes = 1 << 13
	maxArenaBytes = 1 << 16
)

// pieceCache remembers the token count of each distinct piece of the
// texts counted with it, so a word that recurs, in a text or across the
// texts of a workspace, is looked up in the vocabulary, or merged, once.
// It is an open-addressing table keyed by the piece's vocabHash; a slot
// holds the piece's first eight bytes and length, which are the whole
// piece for most pieces, and a longer piece is kept in an arena, so
// counts stay exact.
type pieceCache struct {
	owner *Counter // whose counts it holds
	slots []cacheSlot
	shift uint // 64 - log2(len(slots))
	used  int
	arena []byte
}

type cacheSlot struct {
	word  uint64 // the piece's first eight bytes, little-endian
	off   uint32 // a longer piece is arena[off : off+size]
	size  uint16 // 0: an empty slot
	count uint16
}

// quickCount returns the number of tokens of the piece text[i:e]: at
// once when it is one byte, or up to eight bytes found in the first slot
// it may be in (most pieces), else by count. The counting loop has it
// inline (the compiler will not).
func (c *pieceCache) quickCount(text string, i, e int) int {
	n := e - i
	if n == 1 {
		return 1 // every byte is a token
	}
	if n <= 8 && i+8 <= len(text) {
		w := load8(text, i) & (^uint64(0) >> ((64 - 8*uint(n)) & 63)) // n is 2 to 8
		s := &c.slots[int(mixHash(w, n)>>c.shift)&(len(c.slots)-1)]
		if s.word == w && int(s.size) == n {
			return int(s.count)
		}
	}
	return c.count(text, i, e)
}

// init gives c its first table.
func (c *pieceCache) init() {
	if c.slots == nil {
		c.resize(minCacheBits)
	}
}

// count returns the number of tokens of the piece text[i:e], two bytes
// or more. c must have a table (init).
func (c *pieceCache) count(text string, i, e int) int {
	n := e - i
	var w, h uint64 // text[i:e]'s first eight bytes (or fewer), and vocabHash
	switch {
	case n <= 8 && i+8 <= len(text):
		// n is 2 to 8: the shift is 0 to 48 (& 63 tells the compiler).
		w = load8(text, i) & (^uint64(0) >> ((64 - 8*uint(n)) & 63))
		h = mixHash(w, n)
	case n <= 8:
		w = load(text[i:e])
		h = mixHash(w, n)
	default:
		w = load8(text, i)
		h = longHash(text[i:e])
	}
	return c.find(text[i:e], w, h)
}

// find is count for piece, whose first bytes are w and vocabHash h.
func (c *pieceCache) find(piece string, w, h uint64) int {
	slots := c.slots
	mask := len(slots) - 1
	p := int(h>>c.shift) & mask
	n := len(piece)
	for range maxCacheProbe {
		s := &slots[p]
		if s.size == 0 {
			return c.add(p, piece, w, h)
		}
		if s.word == w && int(s.size) == n && (n <= 8 || string(c.arena[s.off:s.off+uint32(n)]) == piece) {
			return int(s.count)
		}
		p = (p + 1) & mask
	}
	return countPiece(piece, w, h)
}

// add counts piece, whose first bytes are w and vocabHash h, and keeps
// its count in slot p, empty, or where h goes once the table has made
// room.
func (c *pieceCache) add(p int, piece string, w, h uint64) int {
	count := countPiece(piece, w, h)
	if len(piece) > math.MaxUint16 || count > math.MaxUint16 || len(piece) > maxArenaBytes {
		return count
	}
	long := len(piece) > 8
	switch {
	case long && len(c.arena)+len(piece) > maxArenaBytes:
		c.resize(minCacheBits)
		p = c.free(h)
	case c.used >= len(c.slots)*3/4:
		c.resize(c.bits() + 1)
		p = c.free(h)
	}
	s := cacheSlot{word: w, size: uint16(len(piece)), count: uint16(count)}
	if long {
		if c.arena == nil {
			c.arena = make([]byte, 0, minArenaBytes)
		}
		s.off = uint32(len(c.arena))
		c.arena = append(c.arena, piece...)
	}
	c.slots[p] = s
	c.used++
	return count
}

// clear empties c, keeping its table.
func (c *pieceCache) clear() {
	clear(c.slots)
	c.used, c.arena = 0, c.arena[:0]
}

// bits is log2 of the table's size.
func (c *pieceCache) bits() uint { return 64 - c.shift }

// resize gives c a table of 1<<bits slots, keeping what it holds if the
// new table is larger and at most 1<<maxCacheBits, else starting over.
func (c *pieceCache) resize(bits uint) {
	old := c.slots
	if bits > maxCacheBits || bits <= c.bits() {
		bits, old = minCacheBits, nil
		c.arena = c.arena[:0]
	}
	if len(old) == 0 && cap(c.slots) >= 1<<bits {
		c.slots = c.slots[:1<<bits]
		clear(c.slots)
	} else {
		c.slots = make([]cacheSlot, 1<<bits)
	}
	c.shift, c.used = 64-bits, 0
	for _, s := range old {
		if s.size == 0 {
			continue
		}
		h := mixHash(s.word, int(s.size))
		if s.size > 8 {
			h = longHash(string(c.arena[s.off : s.off+uint32(s.size)]))
		}
		c.slots[c.free(h)] = s
		c.used++
	}
}

// free returns the first empty slot from where h goes.
func (c *pieceCache) free(h uint64) int {
	mask := len(c.slots) - 1
	p := int(h>>c.shift) & mask
	for c.slots[p].size != 0 {
		p = (p + 1) & mask
	}
	return p
}

// countPiece is the number of tokens of piece, whose first bytes are w
// and vocabHash h: one if it is in the vocabulary, else what byte-pair
// merging makes of it.
func countPiece(piece string, w, h uint64) int {
	if _, ok := rankWord(piece, w, h); ok {
		return 1
	}
	return mergeCount(piece)
}
