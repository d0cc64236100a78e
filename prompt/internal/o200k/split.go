package o200k

import (
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
// its quantifiers imply, in the pattern's order.
type splitter struct {
	runes []rune
	cls   []uint8
	offs  []int32 // byte offset of each rune, and the text's length
}

// at returns the class of rune i, 0 past the end (a class nothing
// matches, as the end of the text).
func (s *splitter) at(i int) uint8 {
	if i >= len(s.cls) {
		return 0
	}
	return s.cls[i]
}

// prefix reports whether rune i is [^\r\n\p{L}\p{N}].
func (s *splitter) prefix(i int) bool {
	return i < len(s.cls) && s.cls[i]&(clsLetter|clsNumber|clsNewline|clsUnmatched) == 0
}

// next returns the end of the piece that starts at rune i, or -1 when no
// piece starts there.
func (s *splitter) next(i int) int {
	c := s.cls[i]
	// [^\r\n\p{L}\p{N}]?[Upper]*[Lower]+'s… and
	// [^\r\n\p{L}\p{N}]?[Upper]+[Lower]*'s…
	for _, alt := range [2]func(int) int{s.upperLower, s.upperThenLower} {
		if s.prefix(i) {
			if e := alt(i + 1); e >= 0 {
				return e
			}
		}
		if e := alt(i); e >= 0 {
			return e
		}
	}
	if c&clsNumber != 0 { // \p{N}{1,3}
		e := i + 1
		for e < i+3 && s.at(e)&clsNumber != 0 {
			e++
		}
		return e
	}
	if e := s.punctuation(i); e >= 0 {
		return e
	}
	if c&clsSpace == 0 {
		return -1
	}
	// The rune is white space: \s*[\r\n]+, \s+(?!\S), \s+.
	k := i
	for s.at(k)&clsSpace != 0 {
		k++
	}
	// \s*[\r\n]+ as tiktoken-go's compiled engine matches it: the
	// greedy \s* gives runes back to the first line break of the run
	// (not the last, as a backtracking engine would), and [\r\n]+
	// takes the line breaks from there.
	for t := i; t < k; t++ {
		if s.cls[t]&clsNewline != 0 {
			for t < k && s.cls[t]&clsNewline != 0 {
				t++
			}
			return t
		}
	}
	if k == len(s.cls) || k-1 == i {
		return k
	}
	return k - 1
}

// upperLower matches [Upper]*[Lower]+ and a contraction at j, returning
// the end or -1: the greedy [Upper]* gives runes back until [Lower]+
// can start.
func (s *splitter) upperLower(j int) int {
	k := j
	for s.at(k)&clsUpper != 0 {
		k++
	}
	for t := k; t >= j; t-- {
		if s.at(t)&clsLower != 0 {
			e := t + 1
			for s.at(e)&clsLower != 0 {
				e++
			}
			return s.contraction(e)
		}
	}
	return -1
}

// upperThenLower matches [Upper]+[Lower]* and a contraction at j.
func (s *splitter) upperThenLower(j int) int {
	k := j
	for s.at(k)&clsUpper != 0 {
		k++
	}
	if k == j {
		return -1
	}
	for s.at(k)&clsLower != 0 {
		k++
	}
	return s.contraction(k)
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at e, or e.
func (s *splitter) contraction(e int) int {
	if e >= len(s.runes) || s.runes[e] != '\'' {
		return e
	}
	// (?i) matches every case of a letter: its simple case folding orbit
	// (S, s and ſ for s).
	fold := func(i int) rune {
		if i >= len(s.runes) {
			return 0
		}
		r := s.runes[i]
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if 'a' <= f && f <= 'z' {
				return f
			}
		}
		return r
	}
	switch a, b := fold(e+1), fold(e+2); {
	case a == 's' || a == 't' || a == 'm' || a == 'd':
		return e + 2
	case a == 'r' && b == 'e', a == 'v' && b == 'e', a == 'l' && b == 'l':
		return e + 3
	}
	return e
}

// punctuation matches " ?[^\s\p{L}\p{N}]+[\r\n/]*" at i, or returns -1.
func (s *splitter) punctuation(i int) int {
	other := func(i int) bool {
		return i < len(s.cls) && s.cls[i]&(clsSpace|clsLetter|clsNumber|clsUnmatched) == 0
	}
	j := i
	if s.runes[i] == ' ' && other(i+1) {
		j = i + 1
	}
	if !other(j) {
		return -1
	}
	for other(j) {
		j++
	}
	for j < len(s.runes) && (s.cls[j]&clsNewline != 0 || s.runes[j] == '/') {
		j++
	}
	return j
}
