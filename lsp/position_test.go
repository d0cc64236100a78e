package lsp

import (
	"testing"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

func TestMapperPositions(t *testing.T) {
	tests := []struct {
		name string
		text string
		off  int
		pos  protocol.Position
	}{
		{"start", "abc", 0, protocol.Position{Line: 0, Character: 0}},
		{"ascii", "abc\ndef", 5, protocol.Position{Line: 1, Character: 1}},
		{"end of text", "abc\ndef", 7, protocol.Position{Line: 1, Character: 3}},
		{"after newline", "abc\n", 4, protocol.Position{Line: 1, Character: 0}},
		{"two-byte char", "é!", 2, protocol.Position{Line: 0, Character: 1}},
		{"three-byte char", "日本", 3, protocol.Position{Line: 0, Character: 1}},
		{"astral emoji is two units", "😀x", 4, protocol.Position{Line: 0, Character: 2}},
		{"after emoji and text", "a😀b\nc", 6, protocol.Position{Line: 0, Character: 4}},
		{"crlf", "ab\r\ncd", 5, protocol.Position{Line: 1, Character: 1}},
		{"between cr and lf is the line end", "ab\r\ncd", 3, protocol.Position{Line: 0, Character: 2}},
		{"a final lone cr ends the line", "ab\r", 3, protocol.Position{Line: 1, Character: 0}},
		{"a lone cr is a line break", "ab\rcd", 4, protocol.Position{Line: 1, Character: 1}},
		{"cr cr lf is two line breaks", "a\r\r\nb", 4, protocol.Position{Line: 2, Character: 0}},
		{"on a lone cr is the line end", "ab\rcd", 2, protocol.Position{Line: 0, Character: 2}},
		{"invalid byte counts one unit", "a\xffb", 2, protocol.Position{Line: 0, Character: 2}},
		{"two invalid bytes", "\xc3\x28x", 2, protocol.Position{Line: 0, Character: 2}},
		{"inside a character maps to its start", "😀x", 2, protocol.Position{Line: 0, Character: 0}},
		{"past the end clamps", "ab", 10, protocol.Position{Line: 0, Character: 2}},
		{"negative clamps", "ab", -1, protocol.Position{Line: 0, Character: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newMapper(tt.text).position(tt.off); got != tt.pos {
				t.Errorf("position(%d) in %q = %+v, want %+v", tt.off, tt.text, got, tt.pos)
			}
		})
	}
}

func TestMapperOffsets(t *testing.T) {
	tests := []struct {
		name string
		text string
		pos  protocol.Position
		off  int
	}{
		{"start", "abc", protocol.Position{}, 0},
		{"second line", "abc\ndef", protocol.Position{Line: 1, Character: 2}, 6},
		{"after emoji", "😀x", protocol.Position{Line: 0, Character: 2}, 4},
		{"middle of surrogate pair", "😀x", protocol.Position{Line: 0, Character: 1}, 0},
		{"past line end clamps to line end", "ab\ncd", protocol.Position{Line: 0, Character: 99}, 2},
		{"past line end before crlf", "ab\r\ncd", protocol.Position{Line: 0, Character: 99}, 2},
		{"past line end before a lone cr", "ab\rcd", protocol.Position{Line: 0, Character: 99}, 2},
		{"after a lone cr", "ab\rcd", protocol.Position{Line: 1, Character: 1}, 4},
		{"line past the end", "ab\ncd", protocol.Position{Line: 7, Character: 0}, 5},
		{"invalid bytes", "\xff\xfex", protocol.Position{Line: 0, Character: 2}, 2},
		{"empty text", "", protocol.Position{Line: 0, Character: 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newMapper(tt.text).offset(tt.pos); got != tt.off {
				t.Errorf("offset(%+v) in %q = %d, want %d", tt.pos, tt.text, got, tt.off)
			}
		})
	}
}

// Every character boundary survives a round trip offset → position → offset.
func TestMapperRoundTrip(t *testing.T) {
	for _, text := range []string{"", "plain\ntext\n", "a😀b\r\n日本語\n\xffz", "🎉🎉\n\n🎉"} {
		m := newMapper(text)
		for off := 0; off <= len(text); {
			if got := m.offset(m.position(off)); got != off && !(off > 0 && text[off-1] == '\r') {
				t.Errorf("%q: offset(position(%d)) = %d", text, off, got)
			}
			if off == len(text) {
				break
			}
			_, size := utf8.DecodeRuneInString(text[off:])
			off += size
		}
	}
}

func FuzzMapper(f *testing.F) {
	f.Add("a😀b\r\n日本語\n\xffz", 3)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, text string, off int) {
		m := newMapper(text)
		pos := m.position(off)
		back := m.offset(pos)
		if back < 0 || back > len(text) {
			t.Fatalf("offset out of range: %d", back)
		}
		if again := m.position(back); again != pos {
			t.Fatalf("position(offset(position(%d))) = %+v, want %+v", off, again, pos)
		}
	})
}

// TestFromRead: a report's offsets, in the text read with CR LF as LF,
// land on the same bytes of a CR LF document.
func TestFromRead(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		read int // an offset in the text as read
		want int // the same byte in doc
	}{
		{"ab\ncd\n", 4, 4},
		{"ab\r\ncd\r\n", 0, 0},
		{"ab\r\ncd\r\n", 2, 2}, // the LF of the first line: its CR
		{"ab\r\ncd\r\n", 3, 4}, // c
		{"ab\r\ncd\r\n", 5, 6}, // the second line's end
		{"ab\r\ncd\r\n", 6, 8}, // the end of the text
		{"a\rb\r\nc", 2, 2},    // a lone CR is text
		{"a\rb\r\nc", 4, 5},
		{"\r\n\r\n\r\nx", 3, 6},
	} {
		m := newMapper(tc.doc)
		if got := m.fromRead(tc.read); got != tc.want {
			t.Errorf("fromRead(%q, %d) = %d, want %d", tc.doc, tc.read, got, tc.want)
		}
	}
}
