package lsp

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"go.lsp.dev/protocol"
)

// frontMatterEnd returns the byte offset just past the closing "---" line of
// YAML front matter at the start of src, or 0 when there is none.
func frontMatterEnd(src string) int {
	first, rest, ok := strings.Cut(src, "\n")
	if !ok || strings.TrimRight(first, "\r") != "---" {
		return 0
	}
	off := len(first) + 1
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		end := off + len(line)
		if found {
			end++
		}
		if t := strings.TrimRight(line, "\r"); t == "---" || t == "..." {
			return end
		}
		off, rest = end, after
	}
	return 0
}

// heading is a Markdown heading: its level, text and the byte range of its
// line.
type heading struct {
	level      int
	text       string
	start, end int // the heading's line, without the line break
}

// headings lists the headings of a Markdown document in order, skipping
// front matter (which goldmark would take for a thematic break and a setext
// heading).
func headings(src string) []heading {
	fm := frontMatterEnd(src)
	// Blank out the front matter so byte offsets stay those of src.
	buf := []byte(src)
	for i := 0; i < fm; i++ {
		if buf[i] != '\n' {
			buf[i] = ' '
		}
	}
	doc := goldmark.DefaultParser().Parse(text.NewReader(buf))
	var out []heading
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		lines := h.Lines()
		if lines.Len() == 0 {
			return ast.WalkSkipChildren, nil
		}
		var b strings.Builder
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			if i > 0 {
				b.WriteByte(' ')
			}
			b.Write(seg.Value(buf))
		}
		first, last := lines.At(0), lines.At(lines.Len()-1)
		start := strings.LastIndexByte(src[:first.Start], '\n') + 1
		end := last.Stop
		if i := strings.IndexByte(src[end:], '\n'); i >= 0 {
			end += i
		} else {
			end = len(src)
		}
		if end > start && src[end-1] == '\r' {
			end--
		}
		out = append(out, heading{level: h.Level, text: strings.TrimSpace(b.String()), start: start, end: end})
		return ast.WalkSkipChildren, nil
	})
	return out
}

// sectionEnd is the byte offset where the section of headings[i] ends: at
// the next heading of the same or a higher level, or at the end of src.
func sectionEnd(src string, hs []heading, i int) int {
	for j := i + 1; j < len(hs); j++ {
		if hs[j].level <= hs[i].level {
			end := hs[j].start
			for end > hs[i].end && (src[end-1] == '\n' || src[end-1] == '\r') {
				end--
			}
			return end
		}
	}
	end := len(src)
	for end > hs[i].end && (src[end-1] == '\n' || src[end-1] == '\r') {
		end--
	}
	return end
}

// documentSymbols builds the outline of a Markdown document from its
// headings, nested by level.
func documentSymbols(src string) []protocol.DocumentSymbol {
	hs := headings(src)
	m := newMapper(src)
	var build func(i, parentLevel int) ([]protocol.DocumentSymbol, int)
	build = func(i, parentLevel int) ([]protocol.DocumentSymbol, int) {
		syms := []protocol.DocumentSymbol{}
		for i < len(hs) && hs[i].level > parentLevel {
			h := hs[i]
			name := h.text
			if name == "" {
				name = strings.Repeat("#", h.level)
			}
			sym := protocol.DocumentSymbol{
				Name:           name,
				Kind:           protocol.SymbolKindString,
				Range:          m.lspRange(h.start, sectionEnd(src, hs, i)),
				SelectionRange: m.lspRange(h.start, h.end),
			}
			var children []protocol.DocumentSymbol
			children, i = build(i+1, h.level)
			if len(children) > 0 {
				sym.Children = children
			}
			syms = append(syms, sym)
		}
		return syms, i
	}
	syms, _ := build(0, 0)
	return syms
}

// foldingRanges folds the front matter and every heading's section.
func foldingRanges(src string) []protocol.FoldingRange {
	m := newMapper(src)
	out := []protocol.FoldingRange{}
	if fm := frontMatterEnd(src); fm > 0 {
		end := m.position(fm - 1) // the closing line's line break, or its end
		out = append(out, protocol.FoldingRange{StartLine: 0, EndLine: end.Line, Kind: protocol.FoldingRangeKindComment})
	}
	hs := headings(src)
	for i, h := range hs {
		start, end := m.position(h.start).Line, m.position(sectionEnd(src, hs, i)).Line
		if end > start {
			out = append(out, protocol.FoldingRange{StartLine: start, EndLine: end, Kind: protocol.FoldingRangeKindRegion})
		}
	}
	return out
}
