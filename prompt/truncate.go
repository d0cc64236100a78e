package prompt

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// lineSlack is how far (in chars) a cut may move to land on a line boundary.
const lineSlack = 200

// Truncation describes what truncating a text to a limit kept.
type Truncation struct {
	// Truncated is false when the text fit and was kept whole.
	Truncated bool
	// Dropped is true when the limit could not even hold the marker, so
	// nothing of the text was kept.
	Dropped bool
	// OriginalChars is the length of the whole text in code points.
	OriginalChars int
	// HeadChars and TailChars are the code points kept from the start and
	// the end; the marker states exactly these numbers.
	HeadChars, TailChars int
	// HeadEnd and TailStart are byte offsets in the original: the dropped
	// range is [HeadEnd, TailStart).
	HeadEnd, TailStart int64
	// ResultChars is the length of the result in code points, marker
	// included; never more than the limit.
	ResultChars int
}

// Truncate fits content (a file called name) into limit chars by the head
// and tail rule of behavior.md §3: it keeps about headRatio of the limit
// from the start and tailRatio from the end, with a marker between them that
// names the file and states exactly how many chars were kept. The marker is
// charged to the limit, so the result never exceeds it. Cuts fall on code
// point boundaries and move back (head) or forward (tail) to a line boundary
// when one lies within 200 chars, so they only ever shrink.
//
// Invalid UTF-8 in content is first replaced byte by byte with U+FFFD.
// When limit cannot hold the marker, Truncate returns "" and Dropped.
func Truncate(name, content string, limit int, headRatio, tailRatio float64) (string, Truncation) {
	t := newText(content)
	parts, tr := truncateText(t, name, limit, headRatio, tailRatio)
	return parts.String(), tr
}

// excerpt is what truncation keeps of a text, in three parts that are
// written one after the other: the head, the marker (with the line break
// before it when the head does not end in one) and the tail. A text that
// fits is all head.
type excerpt struct {
	head, marker, tail string
}

// String joins the parts.
func (e excerpt) String() string {
	if e.marker == "" && e.tail == "" {
		return e.head
	}
	return e.head + e.marker + e.tail
}

// endsInNewline reports whether the joined parts end with a line break.
func (e excerpt) endsInNewline() bool {
	switch {
	case e.tail != "":
		return e.tail[len(e.tail)-1] == '\n'
	case e.marker != "":
		return e.marker[len(e.marker)-1] == '\n'
	}
	return e.head != "" && e.head[len(e.head)-1] == '\n'
}

// Len is the length of the joined parts in bytes.
func (e excerpt) Len() int { return len(e.head) + len(e.marker) + len(e.tail) }

func truncateText(t *text, name string, limit int, headRatio, tailRatio float64) (excerpt, Truncation) {
	tr := Truncation{OriginalChars: t.chars}
	if t.chars <= limit {
		tr.HeadChars, tr.HeadEnd, tr.TailStart, tr.ResultChars = t.chars, t.size, t.size, t.chars
		return excerpt{head: t.content()}, tr
	}
	tr.Truncated = true
	maxMarker := markerChars(name, t.chars, t.chars, t.chars) + 1 // +1: a newline before it
	avail := limit - maxMarker
	if avail < 2 {
		tr.Dropped = true
		tr.HeadEnd, tr.TailStart = 0, t.size
		return excerpt{}, tr
	}
	h := int(float64(limit) * headRatio)
	tl := int(float64(limit) * tailRatio)
	if h+tl > avail {
		h = int(float64(avail) * headRatio / (headRatio + tailRatio))
		tl = int(float64(avail) * tailRatio / (headRatio + tailRatio))
	}
	if h+tl > avail { // rounding guard
		tl = avail - h
	}

	head := t.head
	cut := charsToBytes(head, h, t.ascii)
	hb := backToLineStart(head, cut)
	headStr := head[:hb]
	moved, _ := countChars(head[hb:cut]) // at most lineSlack chars
	tr.HeadChars = h - moved
	tr.HeadEnd = int64(hb)

	tail, tailBase := t.tail, t.size-int64(len(t.tail))
	if !t.sampled {
		tail, tailBase = t.head, 0
	}
	start := len(tail) - charsFromEndToBytes(tail, tl, t.ascii && !t.sampled)
	tb := forwardToLineStart(tail, start)
	tailStr := tail[tb:]
	moved, _ = countChars(tail[start:tb])
	tr.TailChars = tl - moved
	tr.TailStart = tailBase + int64(tb)

	newline := len(headStr) > 0 && headStr[len(headStr)-1] != '\n'
	m := markerLine(name, tr.HeadChars, tr.TailChars, t.chars, newline)
	mc := markerChars(name, tr.HeadChars, tr.TailChars, t.chars)
	if newline {
		mc++
	}
	tr.ResultChars = tr.HeadChars + mc + tr.TailChars
	return excerpt{head: headStr, marker: m, tail: tailStr}, tr
}

// marker is the text between head and tail. It always ends in a newline.
func marker(name string, headChars, tailChars, total int) string {
	return markerLine(name, headChars, tailChars, total, false)
}

// The fixed parts of the marker.
const (
	markerOpen = "[...truncated, read "
	markerMid  = " for full content...]\n("
	markerKept = ": kept "
	markerPlus = " + "
	markerOf   = " of "
	markerEnd  = " chars)\n"
)

// markerLine is marker, after a line break when newline is set, written
// in one allocation.
func markerLine(name string, headChars, tailChars, total int, newline bool) string {
	var b strings.Builder
	b.Grow(1 + len(markerOpen) + len(markerMid) + len(markerKept) + len(markerPlus) + len(markerOf) + len(markerEnd) + 2*len(name) + 3*27)
	if newline {
		b.WriteByte('\n')
	}
	var num [32]byte
	b.WriteString(markerOpen)
	b.WriteString(name)
	b.WriteString(markerMid)
	b.WriteString(name)
	b.WriteString(markerKept)
	b.Write(appendGrouped(num[:0], headChars))
	b.WriteString(markerPlus)
	b.Write(appendGrouped(num[:0], tailChars))
	b.WriteString(markerOf)
	b.Write(appendGrouped(num[:0], total))
	b.WriteString(markerEnd)
	return b.String()
}

// markerChars is the length of marker(name, h, t, total) in code points,
// worked out without writing it.
func markerChars(name string, h, t, total int) int {
	nc, _ := countChars(name)
	return 2*nc + len(markerOpen) + len(markerMid) + len(markerKept) + len(markerPlus) + len(markerOf) + len(markerEnd) +
		groupedLen(h) + groupedLen(t) + groupedLen(total)
}

// groupedLen is len(GroupThousands(n)).
func groupedLen(n int) int {
	d, neg := 1, 0
	u := uint64(n)
	if n < 0 {
		u, neg = -u, 1
	}
	for ; u >= 10; u /= 10 {
		d++
	}
	return neg + d + (d-1)/3
}

// GroupThousands formats n with commas, as budget reports print counts:
// 25000 → "25,000", -1234 → "-1,234".
func GroupThousands(n int) string {
	if n > -1000 && n < 1000 {
		return strconv.Itoa(n)
	}
	var buf [32]byte
	return string(appendGrouped(buf[:0], n))
}

// appendGrouped appends GroupThousands(n) to b.
func appendGrouped(b []byte, n int) []byte {
	var digits [24]byte
	s := strconv.AppendInt(digits[:0], int64(n), 10)
	if n < 0 {
		b, s = append(b, '-'), s[1:]
	}
	pre := len(s) % 3
	if pre == 0 && len(s) > 0 {
		pre = 3
	}
	b = append(b, s[:pre]...)
	for i := pre; i < len(s); i += 3 {
		b = append(b, ',')
		b = append(b, s[i:i+3]...)
	}
	return b
}

// charsToBytes returns the byte offset in s after its first n code points.
// It skips 64 bytes, then eight, at a time while the code points starting
// in them are fewer than what is left to skip.
func charsToBytes(s string, n int, ascii bool) int {
	if ascii {
		return min(n, len(s))
	}
	i := 0
	for ; i+64 <= len(s); i += 64 {
		starts := starts64(s, i)
		if starts > n {
			break
		}
		n -= starts
	}
	for ; i+8 <= len(s); i += 8 {
		starts := 8 - bits.OnesCount64(contBits(word(s, i)))
		if starts > n {
			break
		}
		n -= starts
	}
	for ; i < len(s); i++ {
		if s[i]&0xC0 != 0x80 {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return len(s)
}

// charsFromEndToBytes returns how many bytes the last n code points of s
// take, skipping 64 bytes, then eight, at a time like charsToBytes.
func charsFromEndToBytes(s string, n int, ascii bool) int {
	if ascii {
		return min(n, len(s))
	}
	i := len(s)
	for ; i >= 64; i -= 64 {
		starts := starts64(s, i-64)
		if starts > n {
			break
		}
		n -= starts
	}
	for ; i >= 8; i -= 8 {
		starts := 8 - bits.OnesCount64(contBits(word(s, i-8)))
		if starts > n {
			break
		}
		n -= starts
	}
	if n == 0 {
		// s[i:] holds exactly the code points wanted, but may begin with
		// the continuation bytes of one that starts before i.
		for i < len(s) && s[i]&0xC0 == 0x80 {
			i++
		}
		return len(s) - i
	}
	for n > 0 && i > 0 {
		i--
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		n--
	}
	return len(s) - i
}

// backToLineStart moves a head cut at byte end back to just after a
// newline, if one lies within lineSlack chars before the cut.
func backToLineStart(s string, end int) int {
	if end == 0 || s[end-1] == '\n' {
		return end
	}
	chars := 0
	for i := end - 1; i > 0 && chars < lineSlack; i-- {
		if s[i]&0xC0 == 0x80 {
			continue
		}
		if s[i-1] == '\n' {
			return i
		}
		chars++
	}
	return end
}

// forwardToLineStart moves a tail cut at byte start forward to the start
// of a line, if one begins within lineSlack chars after the cut and the tail
// keeps at least one char.
func forwardToLineStart(s string, start int) int {
	if start == 0 || start >= len(s) || s[start-1] == '\n' {
		return start
	}
	chars := 0
	for i := start; i < len(s)-1 && chars < lineSlack; i++ {
		if s[i]&0xC0 == 0x80 {
			continue
		}
		if s[i] == '\n' {
			return i + 1
		}
		chars++
	}
	return start
}

// starts64 is the number of code points starting in the 64 bytes of s
// at i: all 64 for ASCII, found with one test.
func starts64(s string, i int) int {
	x := unsafe.Slice(unsafe.StringData(s[i:i+64]), 64)
	le := binary.LittleEndian
	w0, w1, w2, w3 := le.Uint64(x[0:]), le.Uint64(x[8:]), le.Uint64(x[16:]), le.Uint64(x[24:])
	w4, w5, w6, w7 := le.Uint64(x[32:]), le.Uint64(x[40:]), le.Uint64(x[48:]), le.Uint64(x[56:])
	if (w0|w1|w2|w3|w4|w5|w6|w7)&hiBits == 0 {
		return 64
	}
	return 64 - bits.OnesCount64(contBits(w0)) - bits.OnesCount64(contBits(w1)) - bits.OnesCount64(contBits(w2)) -
		bits.OnesCount64(contBits(w3)) - bits.OnesCount64(contBits(w4)) - bits.OnesCount64(contBits(w5)) -
		bits.OnesCount64(contBits(w6)) - bits.OnesCount64(contBits(w7))
}
