package o200k

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Character classes of the split pattern, as bits.
const (
	clsLetter  = 1 << iota // \p{L}
	clsNumber              // \p{N}
	clsSpace               // \s
	clsUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clsNewline             // [\r\n]
	// clsUnmatched is DEL, which tiktoken-go's compiled engine leaves out
	// of [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}] (its ASCII bitmaps stop
	// at 126): no alternative matches it, and the text is searched on
	// from the next rune, so it is in no piece and counts no token.
	clsUnmatched
)

// asciiClass is class for the ASCII characters.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = slowClass(r)
	}
	return t
}()

func class(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return slowClass(r)
}

func slowClass(r rune) uint8 {
	var c uint8
	mark := unicode.Is(unicode.M, r)
	switch {
	case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
		c |= clsLetter | clsUpper
	case unicode.Is(unicode.Ll, r):
		c |= clsLetter | clsLower
	case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
		c |= clsLetter | clsUpper | clsLower
	case mark:
		c |= clsUpper | clsLower
	case unicode.Is(unicode.N, r):
		c |= clsNumber
	case unicode.IsSpace(r):
		c |= clsSpace
	}
	if r == '\r' || r == '\n' {
		c |= clsNewline
	}
	if r == 0x7f {
		c |= clsUnmatched
	}
	return c
}

// splitter walks a text piece by piece as o200k_base's split pattern
// (see pattern) matches it, without a regular-expression engine: each
// alternative of the pattern is matched by hand, with the backtracking
// its quantifiers imply, in the pattern's order. It works on byte
// offsets: every byte of a rune carries the rune's class, so a run of a
// class is scanned byte by byte, and only the steps of exactly one rune
// (an optional prefix, up to three digits, a give-back) decode runes.
type splitter struct {
	s     string  // valid UTF-8
	cls   []uint8 // class of each byte of s, then clsPad of clsEnd
	cache pieceCache
	runes [64]runeClass // see class
}

// runeClass is a rune beyond ASCII (0 for none) and its class.
type runeClass struct {
	r rune
	c uint8
}

// maxPooledBytes bounds the class buffer a pooled splitter keeps.
const maxPooledBytes = 1 << 20

// reset makes sp split s, and reports whether s is valid UTF-8: each
// byte of an invalid sequence is classed as U+FFFD, which only splitting
// a text cut short inside a rune relies on (splitSeams).
func (sp *splitter) reset(s string) bool {
	sp.s = s
	if cap(sp.cls) < len(s)+clsPad {
		sp.cls = make([]uint8, len(s)+clsPad)
	}
	cls := sp.cls[:len(s)+clsPad]
	valid := true
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if w := load8(s, i); w&0x8080808080808080 == 0 {
				// Eight ASCII bytes (the common case) at once.
				c := cls[i : i+8 : i+8]
				c[0], c[1], c[2], c[3] = asciiClass[w&0x7f], asciiClass[w>>8&0x7f], asciiClass[w>>16&0x7f], asciiClass[w>>24&0x7f]
				c[4], c[5], c[6], c[7] = asciiClass[w>>32&0x7f], asciiClass[w>>40&0x7f], asciiClass[w>>48&0x7f], asciiClass[w>>56&0x7f]
				i += 8
				continue
			}
		}
		if b := s[i]; b < utf8.RuneSelf {
			cls[i] = asciiClass[b]
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			valid = false // a byte of U+FFFD's class
		}
		c := sp.class(r)
		for end := i + size; i < end; i++ {
			cls[i] = c
		}
	}
	for i := len(s); i < len(cls); i++ {
		cls[i] = clsEnd
	}
	sp.cls = cls
	return valid
}

// class is slowClass(r), remembered for the last rune of each
// r%len(sp.runes): the few letters and dashes beyond ASCII a text is
// written with recur.
func (sp *splitter) class(r rune) uint8 {
	k := &sp.runes[int(r)%len(sp.runes)]
	if k.r != r {
		k.r, k.c = r, slowClass(r)
	}
	return k.c
}

// clsPad is how many bytes of clsEnd follow the classes of a text: a
// scan may read the classes of eight bytes at once (run) from any byte
// of the text or its end.
const clsPad = 8

// clsEnd is the class past the end of a text: unmatched, it is in no
// class a scan looks for, nor a prefix, nor [^\s\p{L}\p{N}], so no scan
// needs to check for the end.
const clsEnd = clsUnmatched

// lowerBits has clsLower in each byte.
const lowerBits = clsLower * 0x0101010101010101

// run returns the end of the run of bytes from e whose classes have all
// of the bits of want (one class's bits in each of its bytes), eight
// bytes at a time.
func run(cls []uint8, e int, want uint64) int {
	for {
		v := binary.LittleEndian.Uint64(cls[e : e+8])
		if m := ^v & want; m != 0 {
			return e + bits.TrailingZeros64(m)/8
		}
		e += 8
	}
}

// runeLen is the length of the rune of valid UTF-8 that starts with b.
func runeLen(b byte) int {
	switch {
	case b < 0xe0:
		if b < utf8.RuneSelf {
			return 1
		}
		return 2
	case b < 0xf0:
		return 3
	}
	return 4
}

// at returns the class of byte i, clsEnd at the end (a class nothing
// matches). No scan reads past the end: each stops at a 0.
func (sp *splitter) at(i int) uint8 { return sp.cls[i] }

// prefix reports whether the rune at i is [^\r\n\p{L}\p{N}].
func (sp *splitter) prefix(i int) bool {
	return sp.cls[i]&(clsLetter|clsNumber|clsNewline|clsUnmatched) == 0
}

// next returns the end of the piece that starts at byte i, or -1 when no
// piece starts there. The common pieces (a word in lower case, with or
// without a space or a mark before it, punctuation, numbers, white
// space) are told apart by the classes of one or two runes; the rest try
// the pattern's alternatives in order (nextInOrder).
func (sp *splitter) next(i int) int {
	cls := sp.cls
	c := cls[i]
	const letterBits = clsUpper | clsLower
	if c&letterBits == clsLower { // \p{Ll}: [Lower]+ and a contraction
		e := run(cls, i+1, lowerBits)
		if e < len(sp.s) && sp.s[e] == '\'' {
			return sp.apostrophe(e)
		}
		return e
	}
	if c&(clsLetter|clsNumber|clsNewline|clsUnmatched) == 0 { // may be [^\r\n\p{L}\p{N}]?
		j := i + runeLen(sp.s[i])
		cj := cls[j] // clsEnd at the end
		if cj&letterBits == clsLower {
			e := run(cls, j+1, lowerBits)
			if e < len(sp.s) && sp.s[e] == '\'' {
				return sp.apostrophe(e)
			}
			return e
		}
		if cj&letterBits == 0 && c&letterBits == 0 {
			// No letter piece starts here, with the prefix or without.
			if e := sp.punctuation(i); e >= 0 {
				return e
			}
			if c&clsSpace == 0 {
				return -1
			}
			return sp.space(i)
		}
		return sp.nextInOrder(i)
	}
	if c&letterBits != 0 {
		return sp.nextInOrder(i)
	}
	// A number, a line break or DEL: not a prefix, not a letter.
	if c&clsNumber != 0 { // \p{N}{1,3}
		e := i
		for n := 0; n < 3 && sp.at(e)&clsNumber != 0; n++ {
			e += runeLen(sp.s[e])
		}
		return e
	}
	if c&clsSpace == 0 {
		return -1
	}
	return sp.space(i)
}

// nextInOrder is next, trying each alternative of the pattern in turn.
func (sp *splitter) nextInOrder(i int) int {
	c := sp.cls[i]
	// [^\r\n\p{L}\p{N}]?[Upper]*[Lower]+'s… and
	// [^\r\n\p{L}\p{N}]?[Upper]+[Lower]*'s…
	pre := sp.prefix(i)
	if pre {
		if e := sp.upperLower(i + runeLen(sp.s[i])); e >= 0 {
			return e
		}
	}
	if e := sp.upperLower(i); e >= 0 {
		return e
	}
	if pre {
		if e := sp.upperThenLower(i + runeLen(sp.s[i])); e >= 0 {
			return e
		}
	}
	if e := sp.upperThenLower(i); e >= 0 {
		return e
	}
	if c&clsNumber != 0 { // \p{N}{1,3}
		e := i
		for n := 0; n < 3 && sp.at(e)&clsNumber != 0; n++ {
			e += runeLen(sp.s[e])
		}
		return e
	}
	if e := sp.punctuation(i); e >= 0 {
		return e
	}
	if c&clsSpace == 0 {
		return -1
	}
	return sp.space(i)
}

// space matches \s*[\r\n]+, \s+(?!\S) and \s+ at i, a white space rune.
func (sp *splitter) space(i int) int {
	k := i
	for sp.at(k)&clsSpace != 0 {
		k++
	}
	// \s*[\r\n]+ as tiktoken-go's compiled engine matches it: the
	// greedy \s* gives runes back to the first line break of the run
	// (not the last, as a backtracking engine would), and [\r\n]+
	// takes the line breaks from there.
	for t := i; t < k; t++ {
		if sp.cls[t]&clsNewline != 0 {
			for t < k && sp.cls[t]&clsNewline != 0 {
				t++
			}
			return t
		}
	}
	// \s+(?!\S) gives the run's last rune back, unless the run is one
	// rune or ends the text (then \s+ takes it all).
	last := k - 1
	for sp.s[last]&0xc0 == 0x80 {
		last--
	}
	if k == len(sp.s) || last == i {
		return k
	}
	return last
}

// upperLower matches [Upper]*[Lower]+ and a contraction at j, returning
// the end or -1: the greedy [Upper]* gives runes back until [Lower]+
// can start.
func (sp *splitter) upperLower(j int) int {
	k := j
	for sp.at(k)&clsUpper != 0 {
		k++
	}
	for t := k; t >= j; t-- {
		if sp.at(t)&clsLower != 0 {
			e := t + 1
			for sp.at(e)&clsLower != 0 {
				e++
			}
			return sp.contraction(e)
		}
	}
	return -1
}

// upperThenLower matches [Upper]+[Lower]* and a contraction at j.
func (sp *splitter) upperThenLower(j int) int {
	k := j
	for sp.at(k)&clsUpper != 0 {
		k++
	}
	if k == j {
		return -1
	}
	for sp.at(k)&clsLower != 0 {
		k++
	}
	return sp.contraction(k)
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at e, or e.
func (sp *splitter) contraction(e int) int {
	if e >= len(sp.s) || sp.s[e] != '\'' {
		return e
	}
	return sp.apostrophe(e)
}

// apostrophe is contraction at e, an apostrophe.
func (sp *splitter) apostrophe(e int) int {
	a, na := sp.folded(e + 1)
	b, nb := sp.folded(e + 1 + na)
	switch {
	case a == 's' || a == 't' || a == 'm' || a == 'd':
		return e + 1 + na
	case a == 'r' && b == 'e', a == 'v' && b == 'e', a == 'l' && b == 'l':
		return e + 1 + na + nb
	}
	return e
}

// folded returns the rune at i as (?i) matches it, the ASCII letter of its
// simple case folding orbit if it has one (S, s and ſ are all s), and its
// length; 0 past the end.
func (sp *splitter) folded(i int) (rune, int) {
	if i >= len(sp.s) {
		return 0, 0
	}
	r, size := utf8.DecodeRuneInString(sp.s[i:])
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if 'a' <= f && f <= 'z' {
			return f, size
		}
	}
	return r, size
}

// punctuation matches " ?[^\s\p{L}\p{N}]+[\r\n/]*" at i, or returns -1.
func (sp *splitter) punctuation(i int) int {
	j := i
	if sp.s[i] == ' ' && sp.other(i+1) {
		j = i + 1
	}
	if !sp.other(j) {
		return -1
	}
	for sp.other(j) {
		j++
	}
	for j < len(sp.s) && (sp.cls[j]&clsNewline != 0 || sp.s[j] == '/') {
		j++
	}
	return j
}

// other reports whether byte i is of a rune in [^\s\p{L}\p{N}].
func (sp *splitter) other(i int) bool {
	return sp.cls[i]&(clsSpace|clsLetter|clsNumber|clsUnmatched) == 0
}
