package workspace

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

func TestCheckText(t *testing.T) {
	tests := []struct {
		name, field, text string
		want              string // the error's message, "" for none
	}{
		{"plain", "text", "Met Ana at the café.", ""},
		{"tab, CR and LF", "text", "a\tb\r\nc\n", ""},
		{"empty", "text", "", ""},
		{"multi-byte runes", "text", "日本 ✓ \u0085 \u2028", ""},
		{"NUL", "text", "Met Ana\x00 today", "text: control character U+0000 at byte 7: text must be printable (tab, CR and LF are allowed)"},
		{"NUL first", "content", "\x00", "content: control character U+0000 at byte 0: text must be printable (tab, CR and LF are allowed)"},
		{"escape after a multi-byte rune", "text", "é\x1b[31m", "text: control character U+001B at byte 2: text must be printable (tab, CR and LF are allowed)"},
		{"DEL", "text", "a\x7f", "text: control character U+007F at byte 1: text must be printable (tab, CR and LF are allowed)"},
		{"vertical tab", "text", "a\vb", "text: control character U+000B at byte 1: text must be printable (tab, CR and LF are allowed)"},
		{"the first of several", "text", "ab\x01\x00", "text: control character U+0001 at byte 2: text must be printable (tab, CR and LF are allowed)"},
		{"no field", "", "\x02", "control character U+0002 at byte 0: text must be printable (tab, CR and LF are allowed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, err := range []error{CheckText(tt.field, tt.text), CheckText(tt.field, []byte(tt.text))} {
				if got := errString(err); got != tt.want {
					t.Errorf("CheckText(%q, %q) = %q, want %q", tt.field, tt.text, got, tt.want)
				}
				var te *TextError
				if err != nil && (!errors.As(err, &te) || te.Field != tt.field || te.OneLine) {
					t.Errorf("CheckText(%q, %q) = %#v, want a *TextError for %q", tt.field, tt.text, err, tt.field)
				}
			}
		})
	}
}

func TestCheckLine(t *testing.T) {
	tests := []struct {
		name, field, s string
		want           string
	}{
		{"plain", "user", "alice@example.com", ""},
		{"unicode", "user", "日本", ""},
		{"NUL", "user", "a\x00b", "user: control character U+0000 at byte 1: it must be printable, without any control character"},
		{"tab", "user", "a\tb", "user: control character U+0009 at byte 1: it must be printable, without any control character"},
		{"LF", "path", "memory/a\n.md", "path: control character U+000A at byte 8: it must be printable, without any control character"},
		{"CR", "path", "\r", "path: control character U+000D at byte 0: it must be printable, without any control character"},
		{"DEL", "user", "x\x7f", "user: control character U+007F at byte 1: it must be printable, without any control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLine(tt.field, tt.s)
			if got := errString(err); got != tt.want {
				t.Errorf("CheckLine(%q, %q) = %q, want %q", tt.field, tt.s, got, tt.want)
			}
			var te *TextError
			if err != nil && (!errors.As(err, &te) || !te.OneLine) {
				t.Errorf("CheckLine(%q, %q) = %#v, want a one-line *TextError", tt.field, tt.s, err)
			}
		})
	}
}

// TestIDControlCharacters: a user or room id holds no control character
// (it goes into the Quire-User trailer of a commit and into the index),
// and no directory name decodes to one.
func TestIDControlCharacters(t *testing.T) {
	encode := []struct{ id, want string }{
		{"a\x00b", "bad id: control character U+0000 at byte 1: it must be printable, without any control character"},
		{"tab\tid", "bad id: control character U+0009 at byte 3: it must be printable, without any control character"},
		{"line\n", "bad id: control character U+000A at byte 4: it must be printable, without any control character"},
		{"\x7f", "bad id: control character U+007F at byte 0: it must be printable, without any control character"},
	}
	for _, tt := range encode {
		enc, err := EncodeID(tt.id)
		var te *TextError
		if errString(err) != tt.want || !errors.Is(err, ErrBadID) || !errors.As(err, &te) {
			t.Errorf("EncodeID(%q) = %q, %v; want %q (ErrBadID, *TextError)", tt.id, enc, err, tt.want)
		}
	}
	decode := []struct{ name, want string }{
		{"a%00b", `bad id: "a%00b" decodes to an id EncodeID refuses: control character U+0000 at byte 1: it must be printable, without any control character`},
		{"%0A", `bad id: "%0A" decodes to an id EncodeID refuses: control character U+000A at byte 0: it must be printable, without any control character`},
		{"%7F", `bad id: "%7F" decodes to an id EncodeID refuses: control character U+007F at byte 0: it must be printable, without any control character`},
	}
	for _, tt := range decode {
		id, err := DecodeID(tt.name)
		var te *TextError
		if errString(err) != tt.want || !errors.Is(err, ErrBadID) || !errors.As(err, &te) {
			t.Errorf("DecodeID(%q) = %q, %v; want %q (ErrBadID, *TextError)", tt.name, id, err, tt.want)
		}
	}
}

// TestCheckFileControlCharacters: a pushed text file holding a control
// character other than tab, CR and LF is refused with its line, column
// and byte offset; other files may hold any bytes.
func TestCheckFileControlCharacters(t *testing.T) {
	tests := []struct {
		path, content string
		want          string // Problem.String(), "" for none
	}{
		{"memory/2026-01-02.md", "# 2026-01-02\n\n## 10:00\n\nMet Ana\x00 today\n",
			"memory/2026-01-02.md:5:8: error: holds the control character U+0000 at byte 31: context files must be printable text (tab, CR and LF are allowed); remove it"},
		{"SOUL.md", "# Soul\r\n\tCalm.\r\n", ""},
		{"SOUL.md", "Café \x1b[1mbold", "SOUL.md:1:6: error: holds the control character U+001B at byte 6: context files must be printable text (tab, CR and LF are allowed); remove it"},
		{"agent.yaml", "name: bot\nx: \x7f\n", "agent.yaml:2:4: error: holds the control character U+007F at byte 13: context files must be printable text (tab, CR and LF are allowed); remove it"},
		{"AGENTS.md", "bad \xff and \x00", "AGENTS.md:1: error: not valid UTF-8 (first bad byte at offset 4); context files must be UTF-8 text: re-save the file as UTF-8"},
		{"skills/x/data.bin", "\x00\x01", ""},
	}
	for _, tt := range tests {
		fsys := fstest.MapFS{tt.path: {Data: []byte(tt.content)}}
		info, err := fs.Stat(fsys, tt.path)
		if err != nil {
			t.Fatal(err)
		}
		probs := CheckFile(tt.path, info, func() ([]byte, error) { return []byte(tt.content), nil })
		var got []string
		for _, p := range probs {
			got = append(got, p.String())
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("CheckFile(%s, %q) = %q, want %q", tt.path, tt.content, got, tt.want)
		}
		if tt.want != "" && (len(probs) != 1 || probs[0].Severity != SeverityError) {
			t.Errorf("CheckFile(%s): %+v, want one error", tt.path, probs)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzCheckText: CheckText and CheckLine accept exactly the values
// without C0 controls or DEL (but tab, CR and LF for text), and name the
// first such byte.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x00b", "\t\r\n", "é\x1b", "\x7f", "日本\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		textAt, lineAt := -1, -1
		for i, r := range []byte(s) {
			if lineAt < 0 && (r < 0x20 || r == 0x7f) {
				lineAt = i
			}
			if textAt < 0 && (r < 0x20 && r != '\t' && r != '\r' && r != '\n' || r == 0x7f) {
				textAt = i
			}
		}
		for _, c := range []struct {
			err  error
			want int
		}{{CheckText("f", s), textAt}, {CheckLine("f", s), lineAt}} {
			var te *TextError
			switch {
			case c.want < 0 && c.err != nil:
				t.Fatalf("%q: %v, want no error", s, c.err)
			case c.want >= 0 && (!errors.As(c.err, &te) || te.Offset != c.want || te.Rune != rune(s[c.want])):
				t.Fatalf("%q: %v, want the control character at byte %d", s, c.err, c.want)
			}
		}
		// A printable text stays printable when it is valid UTF-8 and
		// decoded rune by rune: no multi-byte rune hides a control byte.
		if utf8.ValidString(s) && CheckText("f", s) == nil {
			for _, r := range s {
				if r < 0x20 && r != '\t' && r != '\r' && r != '\n' || r == 0x7f {
					t.Fatalf("%q: CheckText passed the control character %U", s, r)
				}
			}
		}
	})
}
