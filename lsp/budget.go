package lsp

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// budgetDiagnostics computes, for the snapshot in v, the diagnostics of
// every context file of every agent (and user) that an open document
// belongs to, keyed by slash path: the exact range truncation drops, files
// clamped or dropped by the total budget with the files that used it up,
// reject-policy violations, and the problems of agent.yaml. The total
// budget couples the files, so a change to one re-diagnoses them all.
//
// checked are the findings of agent.Check, the validation `quire check`
// and a push run: those the budget diagnostics do not already cover
// (names, links, sizes, SKILL.md) are added on their files.
func budgetDiagnostics(a *analysis, v view, now time.Time, checked []workspace.Problem) map[string][]protocol.Diagnostic {
	out := map[string][]protocol.Diagnostic{}
	if a.ws == nil {
		return out
	}
	d := diagnoser{fsys: v.fsys, out: out, texts: map[string]*mapper{}, covered: map[string]bool{}}
	for _, pr := range a.ws.Problems() {
		d.problem(pr)
	}
	var paths []string
	for _, doc := range v.docs {
		if doc.path != "" {
			paths = append(paths, doc.path)
		}
	}
	sort.Strings(paths)

	type reqKey struct{ agent, user, room string }
	done := map[reqKey]bool{}
	for _, p := range paths {
		for _, req := range a.requestsFor(p, now) {
			key := reqKey{req.Agent, req.User, req.Room}
			if done[key] {
				continue
			}
			done[key] = true
			res, err := a.ws.Assemble(req)
			if err != nil {
				continue
			}
			d.report(&res.Report)
		}
	}
	d.checked(checked, paths)
	return out
}

// diagnoser gathers budgetDiagnostics' diagnostics by path.
type diagnoser struct {
	fsys    *overlay
	out     map[string][]protocol.Diagnostic
	texts   map[string]*mapper // read once per path
	covered map[string]bool    // files a report has diagnosed
}

// mapper returns the mapper of the file at p (of no text when unreadable).
func (d *diagnoser) mapper(p string) *mapper {
	if m, ok := d.texts[p]; ok {
		return m
	}
	data, err := fs.ReadFile(d.fsys, p)
	if err != nil {
		data = nil
	}
	m := newMapper(string(data))
	d.texts[p] = m
	return m
}

// problem adds pr as a diagnostic on its file.
func (d *diagnoser) problem(pr workspace.Problem) {
	d.out[pr.Path] = append(d.out[pr.Path], problemDiagnostic(d.mapper(pr.Path), pr))
}

// report adds the problems and file diagnostics of one assembled prompt,
// each file's only from the first report that has it.
func (d *diagnoser) report(rep *prompt.Report) {
	rejected := map[string]string{}
	for _, pr := range rep.Problems {
		if pr.Code == "budget-reject" {
			rejected[pr.Path] = pr.Message
			continue
		}
		if !d.covered[pr.Path] {
			d.problem(pr)
		}
	}
	for _, f := range rep.Files {
		if f.Path == "" || d.covered[f.Path] {
			continue
		}
		d.covered[f.Path] = true
		d.out[f.Path] = append(d.out[f.Path], fileDiagnostics(d.mapper(f.Path), f, rep, rejected[f.Path])...)
	}
}

// checked adds the findings of agent.Check that the budget diagnostics do
// not already say; open are the paths of the open documents.
func (d *diagnoser) checked(checked []workspace.Problem, open []string) {
	isOpen := map[string]bool{}
	for _, p := range open {
		isOpen[p] = true
	}
	for _, pr := range checked {
		switch {
		case strings.HasPrefix(pr.Code, "budget-") && pr.Code != prompt.CodeBudgetNear, hasCode(d.out[pr.Path], pr.Code):
			continue // the budget diagnostics say it, with exact ranges (near the budget: nothing is cut, so agent.Check's words)
		case pr.Code == workspace.CodeInvalidUTF8 && isOpen[pr.Path]:
			continue // marked run by run in the buffer (invalidUTF8)
		}
		d.problem(pr)
	}
}

// hasCode reports whether one of diags has code.
func hasCode(diags []protocol.Diagnostic, code string) bool {
	for _, d := range diags {
		if c, ok := d.Code.(protocol.String); ok && string(c) == code {
			return true
		}
	}
	return false
}

// fileDiagnostics describes what the budget does to one context file.
// Each range that does not reach the prompt is faded (a hint tagged
// unnecessary, which editors draw as faded text without a squiggle), and
// one warning on its first line says why, with the numbers. Under the
// reject policy an over-budget file is an error instead of a warning.
func fileDiagnostics(m *mapper, f prompt.FileReport, rep *prompt.Report, rejection string) []protocol.Diagnostic {
	var out []protocol.Diagnostic
	severity := protocol.DiagnosticSeverityWarning
	if f.OverBudget {
		severity = protocol.DiagnosticSeverityError
	}
	code := protocol.String("budget-" + string(f.Status))
	for _, r := range f.Dropped {
		start, end := m.fromRead(int(r.Start.Offset)), m.fromRead(int(r.End.Offset))
		fade := "not in the prompt: cut by the per-file budget"
		switch {
		case rejection != "":
			fade = "over the per-file budget"
		case f.Status == prompt.StatusClamped:
			fade = "not in the prompt: cut by the total budget"
		case f.Status == prompt.StatusDropped:
			fade = "not in the prompt: the total budget was used up before this file"
		}
		out = append(out, protocol.Diagnostic{
			Range:    m.lspRange(start, end),
			Severity: protocol.DiagnosticSeverityHint,
			Source:   protocol.NewOptional(diagnosticSource),
			Code:     code,
			Message:  protocol.String(fade),
			Tags:     protocol.NewDiagnosticTags(protocol.DiagnosticTagUnnecessary),
		})
		ls, le := m.firstTextLine(start, end)
		out = append(out, protocol.Diagnostic{
			Range:    m.lspRange(ls, le),
			Severity: severity,
			Source:   protocol.NewOptional(diagnosticSource),
			Code:     code,
			Message:  protocol.String(budgetMessage(f, rep, rejection)),
		})
	}
	if f.InvalidBytes > 0 {
		// A closed file read from disk; open buffers are checked against
		// the disk in invalidUTF8, since the editor shows U+FFFD.
		out = append(out, protocol.Diagnostic{
			Range:    m.lspRange(0, m.lineEnd(0)),
			Severity: protocol.DiagnosticSeverityError,
			Source:   protocol.NewOptional(diagnosticSource),
			Code:     protocol.String("invalid-utf8"),
			Message:  protocol.String(fmt.Sprintf("%s has %d bytes that are not UTF-8; they reach the prompt as U+FFFD and the git endpoint refuses the file: re-save it as UTF-8", f.Name, f.InvalidBytes)),
		})
	}
	if len(f.Dropped) == 0 && rejection != "" {
		out = append(out, protocol.Diagnostic{
			Range:    m.lspRange(0, m.lineEnd(0)),
			Severity: protocol.DiagnosticSeverityError,
			Source:   protocol.NewOptional(diagnosticSource),
			Code:     protocol.String("budget-reject"),
			Message:  protocol.String(rejection),
		})
	}
	return out
}

// budgetMessage says what happened to a file and why, with the numbers
// in the budget's unit (chars or tokens) and the cut in chars.
func budgetMessage(f prompt.FileReport, rep *prompt.Report, rejection string) string {
	cut := f.OriginalChars - f.HeadChars - f.TailChars
	b := &rep.Budget
	unit := b.UnitName()
	orig, _, before := f.In(b)
	var msg string
	switch f.Status {
	case prompt.StatusTruncated:
		msg = fmt.Sprintf("%s is %s %s, over the per-file budget of %s %s: these %s chars are cut from the prompt (kept %s + %s)",
			f.Name, prompt.GroupThousands(orig), unit, prompt.GroupThousands(b.PerFile()), unit, prompt.GroupThousands(cut),
			prompt.GroupThousands(f.HeadChars), prompt.GroupThousands(f.TailChars))
	case prompt.StatusClamped:
		msg = fmt.Sprintf("%s is clamped by the total budget of %s %s: %s used %s %s before it, leaving %s; these %s chars are cut from the prompt (kept %s + %s of %s)",
			f.Name, prompt.GroupThousands(b.Total()), unit, usedByText(f.UsedBy), prompt.GroupThousands(b.Total()-before), unit,
			prompt.GroupThousands(before), prompt.GroupThousands(cut), prompt.GroupThousands(f.HeadChars), prompt.GroupThousands(f.TailChars), prompt.GroupThousands(f.OriginalChars))
	case prompt.StatusDropped:
		msg = fmt.Sprintf("%s is not in the prompt: %s used %s of the total budget of %s %s, leaving %s",
			f.Name, usedByText(f.UsedBy), prompt.GroupThousands(b.Total()-before),
			prompt.GroupThousands(b.Total()), unit, prompt.GroupThousands(before))
	default:
		msg = f.Name + ": " + f.Note
	}
	if rejection != "" {
		// Nothing is cut: the push is refused until the file fits.
		return rejection + "; until then a push with this file is refused. The faded text is what goes over the budget."
	}
	return msg
}

// problemDiagnostic places a Quire problem (1-based line and column in
// code points) in its file.
func problemDiagnostic(m *mapper, pr workspace.Problem) protocol.Diagnostic {
	start := m.pointOffset(pr.Line, pr.Column)
	end := start
	if pr.Line > 0 {
		end = m.lineEnd(pr.Line - 1)
		if pr.Column == 0 {
			start = m.lineStarts[pr.Line-1]
		}
		if pr.Line > m.lineCount() {
			start, end = len(m.text), len(m.text)
		}
	}
	sev := protocol.DiagnosticSeverityError
	switch pr.Severity {
	case workspace.SeverityWarning:
		sev = protocol.DiagnosticSeverityWarning
	case workspace.SeverityInfo:
		sev = protocol.DiagnosticSeverityInformation
	}
	return protocol.Diagnostic{
		Range:    m.lspRange(start, end),
		Severity: sev,
		Source:   protocol.NewOptional(diagnosticSource),
		Code:     protocol.String(pr.Code),
		Message:  protocol.String(pr.Message),
	}
}
