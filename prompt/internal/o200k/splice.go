package o200k

import (
	"fmt"
	"math"
	"sort"
	"unicode/utf8"
)

// Index is how a text was split: a position the splitter reached every
// indexStride bytes or so, with the number of tokens before it. With it,
// the text with a middle part replaced (a truncated file: head, marker,
// tail) is counted by splitting only around the seams: the split pattern
// has no look-behind, so before the head's end the pieces are the
// original's, and once the split of the tail reaches a position the
// original's split reached, the rest is the original's too.
type Index struct {
	text   string
	total  int
	pos    []uint32 // ascending; the first is 0, the last len(text)
	before []uint32 // tokens before pos[k]
}

// indexStride is the distance between an Index's positions: each seam
// is split over up to about this many bytes more than it needs.
const indexStride = 64

// Text is the indexed text.
func (x *Index) Text() string { return x.text }

// CountIndexed is Count, also returning an index of s for CountSpliced
// (nil when s is not valid UTF-8 or too large to index).
func (c *Counter) CountIndexed(s string) (int, *Index, error) {
	if len(s) >= math.MaxUint32 {
		n, err := c.Count(s)
		return n, nil, err
	}
	guess := len(s)/indexStride + 2
	x := &Index{text: s, pos: make([]uint32, 0, guess), before: make([]uint32, 0, guess)}
	n, ok := c.count(s, x)
	if !ok {
		n, err := c.Count(s)
		return n, nil, err
	}
	x.total = n
	return n, x, nil
}

// spliceWindow is how many bytes of the tail the first try at a splice
// splits; a try that cannot tell where the split rejoins the original's
// doubles it.
const spliceWindow = 256

// CountSpliced returns the number of tokens of x's text with the bytes
// [head, tail) replaced by insert: text[:head] + insert + text[tail:].
func (c *Counter) CountSpliced(x *Index, head int, insert string, tail int) (int, error) {
	return x.spliced(c, head, insert, tail, spliceWindow)
}

func (x *Index) spliced(c *Counter, head int, insert string, tail, window int) (int, error) {
	s := x.text
	if head < 0 || tail < head || tail > len(s) || !runeStart(s, head) || !runeStart(s, tail) {
		return 0, fmt.Errorf("o200k: cannot splice bytes [%d, %d) of a text of %d: not a range of runes", head, tail, len(s))
	}
	if !utf8.ValidString(insert) {
		return c.Count(s[:head] + insert + s[tail:])
	}
	k := x.safeStart(head)
	for ; ; window *= 2 {
		end := min(len(s), tail+window)
		if n, ok := x.splitSeams(c, k, head, insert, tail, end); ok {
			return n, nil
		}
	}
}

// runeStart reports whether i is the offset of a rune in s (or its end).
func runeStart(s string, i int) bool { return i == len(s) || utf8.RuneStart(s[i]) }

// reachPast bounds how far past the end of a piece the splitter reads,
// besides the rest of a run of upper-case runes (the greedy [Upper]* of
// a piece that ends inside the run): the contraction after it, ' and two
// runes. (A run of white space is read to its end too, but only to cut a
// piece of white space that ends in its last rune or at line breaks
// found before.)
const reachPast = 9

// safeStart returns the last k such that splitting text[:head]+anything
// reaches pos[k] as the original's split did, having cut the same pieces
// before it: each of them ends at least reachPast bytes before head, and
// before a rune that is not upper case, so the splitter read nothing of
// head or after it to cut them.
func (x *Index) safeStart(head int) int {
	limit := min(head-reachPast, lastNotUpper(x.text, 0, head))
	// The last k with pos[k] <= limit; pos[0] is 0, always safe.
	k := sort.Search(len(x.pos), func(k int) bool { return int(x.pos[k]) > limit }) - 1
	return max(k, 0)
}

// lastNotUpper returns the offset of the last rune of s[from:to] that is
// not upper case (in the split pattern's sense), or -1.
func lastNotUpper(s string, from, to int) int {
	for i := to; i > from; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		if class(r)&clsUpper == 0 {
			return i
		}
	}
	return -1
}

// splitSeams counts the spliced text from pos[k] by splitting
// text[pos[k]:head] + insert + text[tail:end] until the split reaches a
// position of the original's past tail. ok is false when it would need
// to read past end to know (end is not the end of the text).
func (x *Index) splitSeams(c *Counter, k, head int, insert string, tail, end int) (n int, ok bool) {
	s := x.text
	start := int(x.pos[k])
	local := s[start:head] + insert + s[tail:end]
	seam := head - start + len(insert) // where the tail starts in local
	safe := len(local)
	if end < len(s) {
		safe = safeEnd(local, seam)
	}
	sp := c.getSplitter()
	defer c.putSplitter(sp)
	sp.reset(local) // valid up to end, which may cut a rune
	sp.cache.init()
	n = int(x.before[k])
	for i := 0; ; {
		if i >= seam {
			if j, found := x.find(i - seam + tail); found {
				return n + x.total - int(x.before[j]), true
			}
		}
		if i >= len(local) || i > safe {
			return 0, false
		}
		e := sp.next(i)
		if e < 0 {
			i += runeLen(local[i])
			continue
		}
		if e > safe {
			return 0, false
		}
		n += sp.cache.quickCount(local, i, e)
		i = e
	}
}

// safeEnd is the last end of a piece of local, a text cut short, that
// the splitter cuts as it would in the whole text (see safeStart): at
// least reachPast bytes before local's end, and at or before a rune that
// is not upper case. It looks no further back than from.
func safeEnd(local string, from int) int {
	return min(len(local)-reachPast, lastNotUpper(local, from, len(local)))
}

// find returns k with pos[k] == p, if the original's split reached p.
func (x *Index) find(p int) (int, bool) {
	k := sort.Search(len(x.pos), func(k int) bool { return int(x.pos[k]) >= p })
	return k, k < len(x.pos) && int(x.pos[k]) == p
}
