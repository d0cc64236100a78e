package lsp

import (
	"context"
	"reflect"
	"testing"

	"go.lsp.dev/protocol"
)

func TestHeadingsSkipFrontMatter(t *testing.T) {
	src := "---\nname: pdf\ndescription: x\n---\n# Title\n\nText\n\n## Sub 😀\nmore\n# Next\n"
	got := headings(src)
	want := []heading{
		{level: 1, text: "Title", start: 33, end: 40},
		{level: 2, text: "Sub 😀", start: 48, end: 59},
		{level: 1, text: "Next", start: 65, end: 71},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headings = %+v\nwant %+v", got, want)
	}
	for _, h := range got {
		if src[h.start] != '#' {
			t.Errorf("heading %q does not start at its line", h.text)
		}
	}
}

func TestDocumentSymbolsNest(t *testing.T) {
	src := "# Soul\n\n## Core Truths 😀\nbe kind\n\n## Boundaries\nno\n# Vibe\nwarm\n"
	syms := documentSymbols(src)
	if len(syms) != 2 || syms[0].Name != "Soul" || syms[1].Name != "Vibe" {
		t.Fatalf("top level = %+v", syms)
	}
	kids := syms[0].Children
	if len(kids) != 2 || kids[0].Name != "Core Truths 😀" || kids[1].Name != "Boundaries" {
		t.Fatalf("children = %+v", kids)
	}
	// "## Core Truths 😀" is 17 UTF-16 units long (the emoji is two).
	if sel := kids[0].SelectionRange; sel.Start != (protocol.Position{Line: 2}) || sel.End != (protocol.Position{Line: 2, Character: 17}) {
		t.Errorf("selection range = %+v", sel)
	}
	if r := syms[0].Range; r.Start.Line != 0 || r.End.Line != 6 {
		t.Errorf("section range of Soul = %+v, want lines 0–6", r)
	}
}

func TestFoldingRanges(t *testing.T) {
	src := "---\nname: x\n---\n# A\ntext\n## B\nmore\n"
	got := foldingRanges(src)
	want := []protocol.FoldingRange{
		{StartLine: 0, EndLine: 2, Kind: protocol.FoldingRangeKindComment},
		{StartLine: 3, EndLine: 6, Kind: protocol.FoldingRangeKindRegion},
		{StartLine: 5, EndLine: 6, Kind: protocol.FoldingRangeKindRegion},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("folding = %+v\nwant %+v", got, want)
	}
}

func TestCompletion(t *testing.T) {
	tests := []struct {
		name, file, src string
		pos             protocol.Position
		want            []string // labels; nil = none
		absent          string
	}{
		{"agent.yaml top level", "agent.yaml", "name: a\n", protocol.Position{Line: 1}, []string{"type", "budget"}, "name"},
		{"agent.yaml budget", "agent.yaml", "budget:\n  per_file: 10\n  ", protocol.Position{Line: 2, Character: 2}, []string{"total", "head_ratio"}, "per_file"},
		{"agent.yaml value", "agent.yaml", "type: ", protocol.Position{Line: 0, Character: 6}, nil, ""},
		{"skill front matter", "skills/pdf/SKILL.md", "---\nname: pdf\n\n---\n# PDF\n", protocol.Position{Line: 2}, []string{"description", "metadata"}, "name"},
		{"skill body", "skills/pdf/SKILL.md", "---\nname: pdf\n---\n\n", protocol.Position{Line: 3}, nil, ""},
		{"other markdown", "SOUL.md", "", protocol.Position{}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := completion("file:///w/"+tt.file, tt.src, tt.pos)
			labels := map[string]bool{}
			for _, it := range items {
				labels[it.Label] = true
			}
			if tt.want == nil && len(items) != 0 {
				t.Errorf("got %d items, want none", len(items))
			}
			for _, w := range tt.want {
				if !labels[w] {
					t.Errorf("missing %q in %v", w, labels)
				}
			}
			if tt.absent != "" && labels[tt.absent] {
				t.Errorf("offered %q, which is already there", tt.absent)
			}
		})
	}
}

func TestDocumentFeaturesOverThePipe(t *testing.T) {
	s := startSession(t, t.TempDir())
	ctx := context.Background()
	s.open("SOUL.md", "---\nx: 1\n---\n# Soul\n## Vibe\n")
	res, err := s.server.DocumentSymbol(ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: s.uri("SOUL.md")}})
	if err != nil {
		t.Fatal(err)
	}
	syms, ok := res.(protocol.DocumentSymbolSlice)
	if !ok || len(syms) != 1 || syms[0].Name != "Soul" || len(syms[0].Children) != 1 {
		t.Errorf("documentSymbol = %#v", res)
	}
	folds, err := s.server.FoldingRanges(ctx, &protocol.FoldingRangeParams{TextDocument: protocol.TextDocumentIdentifier{URI: s.uri("SOUL.md")}})
	if err != nil || len(folds) != 2 {
		t.Errorf("foldingRange = %+v, %v; want front matter and one section", folds, err)
	}
	s.open("agent.yaml", "")
	comp, err := s.server.Completion(ctx, &protocol.CompletionParams{
		TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: s.uri("agent.yaml")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if items, ok := comp.(protocol.CompletionItemSlice); !ok || len(items) != len(agentKeys) {
		t.Errorf("completion in an empty agent.yaml = %#v", comp)
	}
}

// Headings, the outline and folding never panic and stay inside the text.
func FuzzMarkdownOutline(f *testing.F) {
	f.Add("---\nname: x\n---\n# A\ntext\n## B 😀\nmore\n")
	f.Add("Title\n=====\n\n```\n# not a heading\n```\n")
	f.Add("---\n---\n#\n")
	f.Fuzz(func(t *testing.T, src string) {
		m := newMapper(src)
		end := m.position(len(src))
		before := func(a, b protocol.Position) bool {
			return a.Line < b.Line || a.Line == b.Line && a.Character <= b.Character
		}
		for _, h := range headings(src) {
			if h.start < 0 || h.end < h.start || h.end > len(src) {
				t.Fatalf("heading %+v outside the text (%d bytes)", h, len(src))
			}
		}
		var walk func([]protocol.DocumentSymbol)
		walk = func(syms []protocol.DocumentSymbol) {
			for _, s := range syms {
				if !before(s.Range.Start, s.SelectionRange.Start) || !before(s.SelectionRange.End, s.Range.End) || !before(s.Range.End, end) {
					t.Fatalf("symbol %q: range %+v, selection %+v", s.Name, s.Range, s.SelectionRange)
				}
				walk(s.Children)
			}
		}
		walk(documentSymbols(src))
		for _, r := range foldingRanges(src) {
			if r.EndLine < r.StartLine || r.EndLine > end.Line {
				t.Fatalf("folding range %+v outside the text", r)
			}
		}
	})
}

// Completion never panics, wherever the cursor is.
func FuzzCompletion(f *testing.F) {
	f.Add("budget:\n  per_file: 1\n  ", uint32(2), uint32(2), true)
	f.Add("---\nname: x\n\n---\n", uint32(2), uint32(0), false)
	f.Fuzz(func(t *testing.T, src string, line, char uint32, yaml bool) {
		name := "file:///w/skills/x/SKILL.md"
		if yaml {
			name = "file:///w/agent.yaml"
		}
		for _, it := range completion(name, src, protocol.Position{Line: line % 64, Character: char % 256}) {
			if it.Label == "" {
				t.Fatal("an item without a label")
			}
		}
	})
}
