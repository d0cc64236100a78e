package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// budgetOf is the budget report of an open document: its file report, the
// whole report and the request it came from. ok is false for documents
// that are not context files of an agent.
type budgetOf struct {
	doc  *document
	file prompt.FileReport
	rep  *prompt.Report
	req  prompt.Request
}

// budgetFor assembles the report for the open document at u.
func (s *server) budgetFor(u protocol.TextDocumentIdentifier) (budgetOf, bool) {
	v := s.currentView()
	doc := v.document(u.URI)
	if doc == nil || doc.path == "" {
		return budgetOf{}, false
	}
	a := s.analyses.of(v.fsys)
	f, rep, req, ok := a.fileReport(doc.path, s.now())
	if !ok {
		return budgetOf{doc: doc, rep: rep, req: req}, false
	}
	return budgetOf{doc: doc, file: f, rep: rep, req: req}, true
}

// previewArgument is the argument of a "Preview prompt" command for b.
func previewArgument(b budgetOf) protocol.LSPAny {
	raw, _ := json.Marshal(PreviewArgs{Agent: b.req.Agent, User: b.req.User, Session: string(b.req.Session), Channel: string(b.req.Channel), Room: b.req.Room, URI: string(b.doc.uri)})
	return raw
}

// codeLensTitle is the summary on line 1 of a context file, e.g.
// "3,412 / 20,000 chars · 14 % of total · Preview prompt".
func codeLensTitle(f prompt.FileReport, rep *prompt.Report) string {
	orig, injected, _ := f.In(&rep.Budget)
	return fmt.Sprintf("%s / %s %s · %d %% of total · Preview prompt",
		prompt.GroupThousands(orig), prompt.GroupThousands(rep.Budget.PerFile()), rep.Budget.UnitName(), percent(injected, rep.Budget.Total()))
}

// CodeLens implements protocol.Server: the budget summary on line 1,
// which opens the preview.
func (s *server) CodeLens(ctx context.Context, params *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	b, ok := s.budgetFor(params.TextDocument)
	if !ok {
		if b.rep == nil || b.doc == nil || path.Base(b.doc.path) != workspace.ConfigFile {
			return []protocol.CodeLens{}, nil
		}
		// agent.yaml: the agent's total.
		title := fmt.Sprintf("context %s / %s %s · Preview prompt", prompt.GroupThousands(b.rep.InjectedIn()), prompt.GroupThousands(b.rep.Budget.Total()), b.rep.Budget.UnitName())
		return []protocol.CodeLens{{Range: protocol.Range{}, Command: protocol.Command{Title: title, Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{previewArgument(b)}}}}, nil
	}
	return []protocol.CodeLens{{
		Range:   protocol.Range{},
		Command: protocol.Command{Title: codeLensTitle(b.file, b.rep), Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{previewArgument(b)}},
	}}, nil
}

// Hover implements protocol.Server: the file's budget figures, its place
// in the order, and what is cut (more about the cut inside a cut range).
func (s *server) Hover(ctx context.Context, params *protocol.HoverParams) (*protocol.Hover, error) {
	s.mu.Lock()
	w := &hoverText{kind: s.hoverKind}
	s.mu.Unlock()
	if w.kind == "" {
		w.kind = protocol.MarkupKindMarkdown // before initialize
	}
	b, ok := s.budgetFor(params.TextDocument)
	if !ok {
		if b.doc != nil {
			return keyHover(w, b.doc, params.Position), nil
		}
		return nil, nil
	}
	f, rep := b.file, b.rep
	m := newMapper(b.doc.text)
	off := m.offset(params.Position)
	w.printf("%s — %s, %s of %d files charged against the total budget\n\n", w.strong(f.Name), f.Status, ordinal(f.Order), len(rep.Files))
	w.table([]string{"", "chars", "tokens"}, [][]string{
		{"file", prompt.GroupThousands(f.OriginalChars), prompt.GroupThousands(f.OriginalTokens)},
		{"in the prompt", prompt.GroupThousands(f.InjectedChars), prompt.GroupThousands(f.InjectedTokens)},
	})
	bu := &rep.Budget
	orig, injected, _ := f.In(bu)
	w.printf("Per-file budget %s %s: the file is %d %% of it. Total budget %s %s: this file takes %d %%, all context files %d %% (%s left).\n\n",
		prompt.GroupThousands(bu.PerFile()), bu.UnitName(), percent(orig, bu.PerFile()),
		prompt.GroupThousands(bu.Total()), bu.UnitName(), percent(injected, bu.Total()),
		percent(rep.InjectedIn(), bu.Total()), prompt.GroupThousands(rep.RemainingIn()))
	var hoverRange *protocol.Range
	for _, r := range f.Dropped {
		start, end := m.fromRead(int(r.Start.Offset)), m.fromRead(int(r.End.Offset))
		cut := utf8.RuneCountInString(safeSlice(b.doc.text, start, end))
		first, last := r.Lines()
		w.printf("Cut: lines %d–%d, %s chars.", first, last, prompt.GroupThousands(cut))
		if len(f.UsedBy) > 0 {
			w.printf(" The total budget was used by %s.", usedByText(f.UsedBy))
		}
		w.write("\n\n")
		if off >= start && off < end {
			rg := m.lspRange(start, end)
			hoverRange = &rg
			w.write(w.em("This text does not reach the prompt.") + "\n\n")
		}
	}
	if f.Note != "" {
		w.write(f.Note + "\n")
	}
	w.printf("\nFor %s · session %s · channel %s", rep.Agent, rep.Session, rep.Channel)
	if rep.User != "" {
		w.printf(" · user %s", rep.User)
	}
	return &protocol.Hover{Contents: w.content(), Range: hoverRange}, nil
}

// InlayHint implements protocol.Server: a hint where the prompt's copy of
// the file is cut and where it resumes.
func (s *server) InlayHint(ctx context.Context, params *protocol.InlayHintParams) ([]protocol.InlayHint, error) {
	b, ok := s.budgetFor(params.TextDocument)
	if !ok {
		return []protocol.InlayHint{}, nil
	}
	m := newMapper(b.doc.text)
	hints := []protocol.InlayHint{}
	yes := true
	for _, r := range b.file.Dropped {
		start, end := m.fromRead(int(r.Start.Offset)), m.fromRead(int(r.End.Offset))
		cut := utf8.RuneCountInString(safeSlice(b.doc.text, start, end))
		label := fmt.Sprintf("✂ %s chars cut from the prompt", prompt.GroupThousands(cut))
		if b.file.Status == prompt.StatusDropped {
			label = "✂ not in the prompt"
		}
		hints = append(hints, protocol.InlayHint{Position: m.position(start), Label: protocol.String(label), PaddingRight: &yes, Tooltip: protocol.String(b.file.Note)})
		if end < len(b.doc.text) && b.file.Status != prompt.StatusDropped {
			hints = append(hints, protocol.InlayHint{Position: m.position(end), Label: protocol.String("✂ the prompt resumes here"), PaddingRight: &yes})
		}
	}
	return hints, nil
}

// safeSlice is text[start:end] clamped to the text.
func safeSlice(text string, start, end int) string {
	start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
	if end < start {
		return ""
	}
	return text[start:end]
}

// ordinal formats 1 → "1st", 2 → "2nd".
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// keyHover explains the agent.yaml or SKILL.md front-matter key under the
// cursor, in w's markup.
func keyHover(w *hoverText, doc *document, pos protocol.Position) *protocol.Hover {
	m := newMapper(doc.text)
	if int(pos.Line) >= m.lineCount() {
		return nil
	}
	start, end := m.lineStarts[pos.Line], m.lineEnd(int(pos.Line))
	line := doc.text[start:end]
	key, _, ok := strings.Cut(line, ":")
	if !ok || strings.HasPrefix(strings.TrimSpace(key), "#") || strings.HasPrefix(strings.TrimSpace(key), "-") {
		return nil
	}
	indent := len(key) - len(strings.TrimLeft(key, " "))
	key = strings.TrimSpace(key)
	var keys []yamlKey
	switch path.Base(doc.path) {
	case workspace.ConfigFile:
		keys = agentKeys
		if indent > 0 {
			if parentKey(doc.text[:start], indent) != "budget" {
				return nil
			}
			keys = budgetKeys
		}
	case workspace.SkillFile:
		if fm := frontMatterEnd(doc.text); fm == 0 || start >= fm || indent > 0 {
			return nil
		}
		keys = skillKeys
	default:
		return nil
	}
	for _, k := range keys {
		if k.name == key {
			r := m.lspRange(start+indent, start+indent+len(key))
			w.write(w.code(k.name) + ": " + k.doc)
			return &protocol.Hover{Contents: w.content(), Range: &r}
		}
	}
	return nil
}
