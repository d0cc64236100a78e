package memory

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// referenceSplit is Split written plainly (line by line, strings.Join,
// utf8.RuneCountInString): the fast Split must give the same spans.
func referenceSplit(text string) []Span {
	var (
		spans   []Span
		lines   []string
		first   int
		size    int
		pending int
	)
	flush := func() {
		kept := lines[:len(lines)-pending]
		if len(kept) > 0 {
			spans = append(spans, Span{StartLine: first, EndLine: first + len(kept) - 1, Text: strings.Join(kept, "\n")})
		}
		lines, size, pending = lines[:0], 0, 0
	}
	blankLine := func(l string) bool { return strings.TrimFunc(l, unicode.IsSpace) == "" }
	n := 0
	for line := range strings.Lines(text) {
		n++
		line = strings.TrimRight(line, "\r\n")
		blank := blankLine(line)
		if blank {
			if len(lines) == 0 {
				continue
			}
			trailing := 0
			for _, l := range lines[len(lines)-pending:] {
				trailing += utf8.RuneCountInString(l) + 1
			}
			if size-trailing >= MinChunkChars {
				flush()
				continue
			}
		}
		chars := utf8.RuneCountInString(line)
		if chars > MaxChunkChars {
			if len(lines) > 0 {
				flush()
			}
			for _, piece := range cut(line, MaxChunkChars) {
				if !blankLine(piece) {
					spans = append(spans, Span{StartLine: n, EndLine: n, Text: piece})
				}
			}
			continue
		}
		grown := size + chars
		if len(lines) > 0 {
			grown++
		}
		if grown > MaxChunkChars {
			flush()
			if blank {
				continue
			}
			grown = chars
		}
		if len(lines) == 0 {
			first = n
		}
		lines = append(lines, line)
		size = grown
		if blank {
			pending++
		} else {
			pending = 0
		}
	}
	if len(lines) > 0 {
		flush()
	}
	return spans
}

func TestSplitMatchesReference(t *testing.T) {
	texts := []string{
		"", "\n", "a", "a\n", "a\r\n\r\nb\r", "a\r\r\nb", "x\ry\n\nz",
		memoryText(20_000),
		strings.ReplaceAll(memoryText(8_000), "\n", "\r\n"),
		"\xff\xfe" + para(600, "é") + "\n\n\xe2\x82\n" + para(700, "a"),
		para(480, "a") + "\n \u00a0\u2003\n\n" + para(30, "b"),
		strings.Repeat("word ", 900) + "\n\u0085\n" + strings.Repeat("ü", 2100),
	}
	for _, text := range texts {
		if got, want := Split(text), referenceSplit(text); !slices.Equal(got, want) {
			t.Errorf("Split(%.40q) =\n%+v\nwant\n%+v", text, got, want)
		}
	}
}

func FuzzSplitMatchesReference(f *testing.F) {
	f.Add("hello\n\nworld")
	f.Add("a\r\n\r\n" + para(600, "b") + "\r\r\n\n" + para(500, "c"))
	f.Add("\xe2\x82\n" + strings.Repeat("ü", 1200) + "\n\u00a0\n\nx")
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := Split(text), referenceSplit(text); !slices.Equal(got, want) {
			t.Fatalf("Split(%q) =\n%+v\nwant\n%+v", text, got, want)
		}
	})
}
