package lsp

import (
	"sort"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// mapper converts between byte offsets in a document and LSP positions
// (zero-based line, UTF-16 code units within the line). It is the only place
// in the server that knows about UTF-16: every feature computes byte offsets
// and asks a mapper for positions, and every position from the client is
// turned into a byte offset here before anything else looks at it.
//
// Invalid UTF-8 is mapped byte by byte: each invalid byte counts as one UTF-16
// unit, which is what editors show (U+FFFD, one unit) for such a byte.
type mapper struct {
	text       string
	lineStarts []int // byte offset of the first byte of each line
	readLFs    []int // fromRead's index: the read offset of each CR LF's LF
	indexed    bool  // readLFs is built
}

// newMapper indexes the line starts of text. Lines end at "\n", "\r\n" or
// a lone "\r", as the protocol defines them; the line break is never
// counted as a character of its line.
func newMapper(text string) *mapper {
	starts := make([]int, 1, 64)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue // the "\n" of "\r\n" ends the line
			}
			starts = append(starts, i+1)
		}
	}
	return &mapper{text: text, lineStarts: starts}
}

// lineCount is the number of lines (a trailing newline opens an empty last line).
func (m *mapper) lineCount() int { return len(m.lineStarts) }

// lineEnd is the byte offset just past the content of line (before its
// "\r\n", "\n" or "\r").
func (m *mapper) lineEnd(line int) int {
	if line+1 >= len(m.lineStarts) {
		return len(m.text) // the last line has no line break
	}
	end := m.lineStarts[line+1] - 1 // the "\n" or lone "\r"
	if m.text[end] == '\n' && end > m.lineStarts[line] && m.text[end-1] == '\r' {
		end--
	}
	return end
}

// position is the LSP position of byte offset off, clamped to the text. An
// offset inside a multi-byte character maps to that character's start.
func (m *mapper) position(off int) protocol.Position {
	if off < 0 {
		off = 0
	}
	if off > len(m.text) {
		off = len(m.text)
	}
	line := sort.Search(len(m.lineStarts), func(i int) bool { return m.lineStarts[i] > off }) - 1
	start := m.lineStarts[line]
	if end := m.lineEnd(line); off > end {
		off = end // between "\r" and "\n": the end of the line
	}
	units := 0
	for i := start; i < off; {
		r, size := utf8.DecodeRuneInString(m.text[i:])
		if i+size > off {
			break // off points into the middle of this character
		}
		units += utf16Len(r, size)
		i += size
	}
	return protocol.Position{Line: uint32(line), Character: uint32(units)}
}

// offset is the byte offset of an LSP position. A line past the end maps to
// the end of the text, a character past the end of its line to the line's
// end, and a character in the middle of a surrogate pair to the start of that
// character.
func (m *mapper) offset(pos protocol.Position) int {
	line := int(pos.Line)
	if line >= len(m.lineStarts) {
		return len(m.text)
	}
	i := m.lineStarts[line]
	end := m.lineEnd(line)
	want := int(pos.Character)
	units := 0
	for i < end {
		r, size := utf8.DecodeRuneInString(m.text[i:])
		n := utf16Len(r, size)
		if units+n > want {
			break
		}
		units += n
		i += size
	}
	return i
}

// fromRead maps off, a byte offset in the text as prompt assembly reads
// it (every CR LF as LF: workspace.NormalizeNewlines), to the offset of
// the same byte in m.text. A report's offsets are of the former, the
// document's of the latter: they differ in a file with CR LF line
// endings (a checkout with core.autocrlf=true). The LF of a CR LF maps
// to its CR, the end of its line.
func (m *mapper) fromRead(off int) int {
	if !m.indexed {
		m.indexed = true
		from := 0
		for {
			k := strings.Index(m.text[from:], "\r\n")
			if k < 0 {
				break
			}
			cr := from + k
			m.readLFs = append(m.readLFs, cr-len(m.readLFs)) // less the CRs before
			from = cr + 2
		}
	}
	return off + sort.SearchInts(m.readLFs, off)
}

// lspRange is the LSP range of the byte range [start, end).
func (m *mapper) lspRange(start, end int) protocol.Range {
	return protocol.Range{Start: m.position(start), End: m.position(end)}
}

// firstTextLine is the byte range of the first line in [start, end) that
// holds text, clipped to [start, end): where one warning about the range
// goes. A range of blank lines gives its first line.
func (m *mapper) firstTextLine(start, end int) (int, int) {
	line := int(m.position(start).Line)
	first := -1
	for ; line < m.lineCount(); line++ {
		ls, le := max(m.lineStarts[line], start), min(m.lineEnd(line), end)
		if ls >= end {
			break
		}
		if first < 0 {
			first = line
		}
		for i := ls; i < le; i++ {
			if !isSpace(m.text[i]) {
				return ls, le
			}
		}
	}
	if first < 0 {
		return start, start
	}
	return max(m.lineStarts[first], start), min(m.lineEnd(first), end)
}

// utf16Len is the number of UTF-16 code units of a decoded rune; an invalid
// byte (RuneError of size 1) counts as one unit.
func utf16Len(r rune, size int) int {
	if r >= 0x10000 && size == 4 {
		return 2
	}
	return 1
}

// pointOffset is the byte offset of a 1-based line and 1-based column
// counted in code points, as Quire's problems and reports give them. A
// column of 0 means the start of the line.
func (m *mapper) pointOffset(line, col int) int {
	if line < 1 {
		return 0
	}
	if line > len(m.lineStarts) {
		return len(m.text)
	}
	i, end := m.lineStarts[line-1], m.lineEnd(line-1)
	for n := 1; n < col && i < end; n++ {
		_, size := utf8.DecodeRuneInString(m.text[i:])
		i += size
	}
	return i
}
