// Package o200k counts tokens of OpenAI's o200k_base encoding, exactly as
// github.com/tiktoken-go/tokenizer does, without its vocabulary map: the
// 199,998 tokens, a hash table over them (hash.go) and one over the
// tokens of two bytes are one embedded string (vocab.bin, made by
// gen.go), so loading costs nothing and the garbage collector has no
// pointers to scan. The text is split into pieces where tiktoken-go's
// compiled engine for the split pattern cuts it, by a hand-written
// matcher (split.go, ten times faster than the engine), and each distinct
// piece is looked up, or merged by byte-pair ranks, once per Counter
// (piececache.go). A text counted with an Index is counted again with its
// middle replaced (a truncated file) by splitting only around the seams
// (splice.go).
package o200k

import (
	_ "embed"
	"fmt"
	"math"
	"sync"
)

//go:generate go run gen.go

//go:embed vocab.bin
var vocab string

// Layout of vocab: n (uint32), n+1 offsets (uint32) into the text, the
// text, then tableSize slots (uint32: rank+1 and a tag, 0 empty, see
// hash.go) of an open-addressing hash table keyed by vocabHash, then
// pairSize slots (uint64: the two bytes, and rank+1 above them, 0 empty)
// of one over the tokens of two bytes, keyed by pairSlot, for merging.
const (
	tableSize = 1 << tableBits
	pairBits  = 13
	pairSize  = 1 << pairBits
)

var (
	nTokens  = int(u32(vocab, 0))
	offsets  = vocab[4 : 4+4*(nTokens+1)]
	textBase = 4 + 4*(nTokens+1)
	textLen  = int(u32(offsets, nTokens))
	table    = vocab[textBase+textLen : textBase+textLen+4*tableSize]
	pairs    = vocab[textBase+textLen+4*tableSize:]
)

// vocabSize is the size vocab.bin's header implies.
var vocabSize = textBase + textLen + 4*tableSize + 8*pairSize

// pattern is o200k_base's split pattern, character for character as
// tiktoken-go compiles it: what the splitter implements, and what the
// tests match it against.
const pattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Counter counts tokens. Its zero value is not usable; use New. A Counter
// is safe for concurrent use. It remembers the counts of the pieces of
// the texts it counted (in a bounded cache per goroutine counting at
// once, which another Counter may take over), so the texts counted
// together, a workspace's files, should share one.
type Counter struct {
	_ byte // an address of its own: a piece cache is its owner's
}

// New returns a Counter.
func New() (*Counter, error) {
	if len(vocab) != vocabSize {
		return nil, fmt.Errorf("o200k: vocab.bin is %d bytes, its header wants %d; run go generate", len(vocab), vocabSize)
	}
	return &Counter{}, nil
}

// Count returns the number of o200k_base tokens in s.
func (c *Counter) Count(s string) (int, error) {
	n, ok := c.count(s, nil)
	if !ok {
		// The pattern matches runes: each invalid byte is U+FFFD, and
		// so is the text of the piece it falls in.
		n, _ = c.count(string([]rune(s)), nil)
	}
	return n, nil
}

// count returns the number of tokens of s, or false if s is not valid
// UTF-8. With x, it also records in x a position the split reaches every
// indexStride bytes or so, and the tokens before it.
func (c *Counter) count(s string, x *Index) (int, bool) {
	sp := c.getSplitter()
	defer c.putSplitter(sp)
	if !sp.reset(s) {
		return 0, false
	}
	pc := &sp.cache
	pc.init()
	n, mark := 0, 0
	if x == nil {
		mark = math.MaxInt // no index: never reached
	}
	for i := 0; i < len(s); {
		if i >= mark {
			x.pos = append(x.pos, uint32(i))
			x.before = append(x.before, uint32(n))
			mark = i + indexStride
		}
		e := sp.next(i)
		if e < 0 {
			i += runeLen(s[i]) // a rune no piece holds (clsUnmatched)
			continue
		}
		// pc.quickCount(s, i, e), inline.
		switch k := e - i; {
		case k == 1:
			n++ // every byte is a token
		case k <= 8 && i+8 <= len(s):
			w := load8(s, i) & (^uint64(0) >> ((64 - 8*uint(k)) & 63)) // k is 2 to 8
			h := mixHash(w, k)
			p := int(h>>pc.shift) & (len(pc.slots) - 1)
			switch sl := &pc.slots[p]; {
			case sl.word == w && int(sl.size) == k:
				n += int(sl.count)
			case sl.size == 0: // a new piece, in the first slot it may be in
				n += pc.add(p, s[i:e], w, h)
			default:
				n += pc.find(s[i:e], w, h)
			}
		default:
			n += pc.count(s, i, e)
		}
		i = e
	}
	if x != nil {
		x.pos = append(x.pos, uint32(len(s)))
		x.before = append(x.before, uint32(n))
	}
	return n, true
}

// getSplitter returns a splitter not in use whose piece cache holds
// pieces c counted, if any.
func (c *Counter) getSplitter() *splitter {
	sp, ok := splitters.Get().(*splitter)
	if !ok {
		sp = new(splitter)
	}
	sp.claim(c)
	return sp
}

// claim makes sp's piece cache c's: the pieces another Counter left in it
// are cleared, c's own are kept.
func (sp *splitter) claim(c *Counter) {
	if sp.cache.owner != c {
		sp.cache.clear()
		sp.cache.owner = c
	}
}

// putSplitter returns sp to the pool unless its buffers grew too large to
// keep.
func (c *Counter) putSplitter(sp *splitter) {
	sp.s = ""
	if cap(sp.cls) <= maxPooledBytes {
		splitters.Put(sp)
	}
}

// splitters holds the splitters not in use, of all Counters: their class
// buffers and piece cache tables are scratch space; a table's contents
// are one Counter's, cleared when another takes it.
var splitters sync.Pool // of *splitter

// u32 reads the i-th little-endian uint32 of s.
func u32(s string, i int) uint32 {
	s = s[4*i : 4*i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// token returns the text of the token of rank r.
func token(r uint32) string {
	return vocab[textBase+int(u32(offsets, int(r))) : textBase+int(u32(offsets, int(r)+1))]
}

// rank looks s up in the vocabulary.
func rank(s string) (uint32, bool) {
	if len(s) <= 8 {
		w := load(s)
		return rankWord(s, w, mixHash(w, len(s)))
	}
	return rankWord(s, 0, vocabHash(s))
}

// rankWord is rank for s whose vocabHash is h and, when s is up to eight
// bytes, whose bytes are w (little-endian): a token of that length is
// compared as one word, read from the vocabulary's text, which the hash
// table follows, so reading eight bytes from any token stays inside it.
func rankWord(s string, w, h uint64) (uint32, bool) {
	n := len(s)
	tag := tagOf(h) << rankBits
	for i := slotOf(h); ; i = (i + 1) & (tableSize - 1) {
		v := u32(table, int(i))
		if v == 0 {
			return 0, false
		}
		if v&^rankMask != tag {
			continue
		}
		r := v&rankMask - 1
		ends := load8(offsets, 4*int(r)) // the token's start, and its end
		start, end := textBase+int(uint32(ends)), textBase+int(ends>>32)
		if end-start != n {
			continue
		}
		if n <= 8 {
			if load8(vocab, start)&(^uint64(0)>>((64-8*uint(n))&63)) == w {
				return r, true
			}
		} else if vocab[start:end] == s {
			return r, true
		}
	}
}

// pairSlot is where the token of two bytes key (the first in the low
// byte) goes in pairs.
func pairSlot(key uint64) uint64 { return key * 0x9e3779b97f4a7c15 >> (64 - pairBits) }

// pairRank2 is the rank of the token of the two bytes a and b, or noRank.
func pairRank2(a, b byte) uint32 {
	key := uint64(a) | uint64(b)<<8
	for i := pairSlot(key); ; i = (i + 1) & (pairSize - 1) {
		v := load8(pairs, 8*int(i))
		if v == 0 {
			return noRank
		}
		if v&0xffff == key {
			return uint32(v>>16) - 1
		}
	}
}

const noRank = math.MaxUint32

// mergeCount is the number of tokens byte-pair encoding makes of piece:
// starting from single bytes, repeatedly merge the adjacent pair whose
// joined text has the lowest rank (the leftmost of equals) until no pair
// is in the vocabulary.
func mergeCount(piece string) int {
	if len(piece) < 64 {
		return mergeScan(piece)
	}
	return mergeHeap(piece)
}

// mergeScan finds each merge with a linear scan: O(n²), fast for the short
// pieces most text is made of. Parts are kept in two small arrays, shifted
// by hand: they hold a few bytes each.
func mergeScan(piece string) int {
	var starts [64]uint8 // part boundaries, the end included
	var ranks [64]uint32 // ranks[i]: rank of parts i and i+1 joined
	n := len(piece)
	for i := range n - 1 {
		starts[i] = uint8(i)
		ranks[i] = pairRank2(piece[i], piece[i+1])
	}
	starts[n-1], starts[n] = uint8(n-1), uint8(n)
	parts := n
	for parts > 1 {
		best, at := uint32(noRank), -1
		for i, r := range ranks[:parts-1] {
			if r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		// Parts at and at+1 join: boundary at+1 goes.
		parts--
		for k := at + 1; k < parts; k++ {
			starts[k] = starts[k+1]
			ranks[k] = ranks[k+1]
		}
		starts[parts] = uint8(n)
		if at+1 < parts {
			ranks[at] = pairRank(piece[starts[at]:starts[at+2]])
		}
		if at > 0 {
			ranks[at-1] = pairRank(piece[starts[at-1]:starts[at+1]])
		}
	}
	return parts
}

// pairRank is the rank of s, two parts joined, or noRank.
func pairRank(s string) uint32 {
	if r, ok := rank(s); ok {
		return r
	}
	return noRank
}

// mergeHeap is mergeScan in O(n log n) for long pieces (a run of
// punctuation or white space can be very long): part boundaries in a
// linked list, candidate merges in a min-heap by (rank, position).
func mergeHeap(piece string) int {
	n := len(piece)
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	cur := make([]uint32, n+1) // rank of the pair starting at a boundary
	for i := range next {
		next[i], prev[i], cur[i] = int32(i+1), int32(i-1), noRank
	}
	next[n] = -1
	pairRank := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		if r, ok := rank(piece[i:next[j]]); ok {
			return r
		}
		return noRank
	}
	var h candHeap
	for i := int32(0); i < int32(n); i++ {
		if r := pairRank(i); r != noRank {
			cur[i] = r
			h = append(h, cand{r, i})
		}
	}
	h.init()
	parts := n
	for len(h) > 0 {
		top := h.pop()
		i := top.pos
		if cur[i] != top.rank {
			continue // stale: the pair changed since it was pushed
		}
		j := next[i]
		k := next[j]
		next[i] = k
		if k >= 0 {
			prev[k] = i
		}
		cur[j] = noRank
		parts--
		for _, b := range [2]int32{i, prev[i]} {
			if b < 0 {
				continue
			}
			cur[b] = pairRank(b)
			if cur[b] != noRank {
				h.push(cand{cur[b], b})
			}
		}
	}
	return parts
}

type cand struct {
	rank uint32
	pos  int32
}

// candHeap is a binary min-heap by rank, then position.
type candHeap []cand

func (h candHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].pos < h[b].pos
}

func (h candHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) push(c cand) {
	*h = append(*h, c)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *candHeap) pop() cand {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h candHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
