package lsp

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// hoverKind is the markup a client asked hovers in: the first kind of its
// textDocument.hover.contentFormat (the order is its preference) that
// the server writes; Markdown when it says nothing.
func hoverKind(caps protocol.ClientCapabilities) protocol.MarkupKind {
	if td := caps.TextDocument; td != nil && td.Hover != nil {
		for _, k := range td.Hover.ContentFormat {
			if k == protocol.MarkupKindMarkdown || k == protocol.MarkupKindPlainText {
				return k
			}
		}
	}
	return protocol.MarkupKindMarkdown
}

// hoverText builds a hover in the client's markup: Markdown, or plain
// text, where emphasis and code marks go and a table is aligned columns
// (a client that shows plain text would show a Markdown table's pipes).
type hoverText struct {
	kind protocol.MarkupKind
	b    strings.Builder
}

func (h *hoverText) plain() bool { return h.kind == protocol.MarkupKindPlainText }

func (h *hoverText) mark(mark, s string) string {
	if h.plain() {
		return s
	}
	return mark + s + mark
}

func (h *hoverText) strong(s string) string { return h.mark("**", s) }
func (h *hoverText) code(s string) string   { return h.mark("`", s) }
func (h *hoverText) em(s string) string     { return h.mark("_", s) }

func (h *hoverText) printf(format string, args ...any) { fmt.Fprintf(&h.b, format, args...) }

func (h *hoverText) write(s string) { h.b.WriteString(s) }

// table writes head and rows, the first column left-aligned and the
// others right-aligned, then a blank line.
func (h *hoverText) table(head []string, rows [][]string) {
	if !h.plain() {
		h.b.WriteString("| " + strings.Join(head, " | ") + " |\n|---" + strings.Repeat("|---:", len(head)-1) + "|\n")
		for _, r := range rows {
			h.b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
		h.b.WriteString("\n")
		return
	}
	width := make([]int, len(head))
	for _, r := range append([][]string{head}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range append([][]string{head}, rows...) {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line.WriteString(c + pad)
			} else {
				line.WriteString("  " + pad + c)
			}
		}
		h.b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	h.b.WriteString("\n")
}

func (h *hoverText) content() *protocol.MarkupContent {
	return &protocol.MarkupContent{Kind: h.kind, Value: h.b.String()}
}
