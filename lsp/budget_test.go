package lsp

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// longText is n code points of Markdown in lines of mixed widths (ASCII,
// two-byte, astral emoji), so that the UTF-16 positions differ from bytes
// and from code points.
func longText(n int) string {
	var b strings.Builder
	line := 0
	for count := 0; count < n; {
		var l string
		switch line % 3 {
		case 0:
			l = "Plain words about the agent's soul and how it behaves."
		case 1:
			l = "Ação, coração, não — 😀 emoji 🎉 and more."
		default:
			l = "## Section heading"
		}
		line++
		r := []rune(l + "\n")
		if count+len(r) > n {
			r = r[:n-count]
		}
		b.WriteString(string(r))
		count += len(r)
	}
	return b.String()
}

// splitBudget splits the diagnostics of one cut into the faded range and
// the one warning (or error) about it; it fails the test unless there are
// exactly these two.
func splitBudget(t *testing.T, diags []protocol.Diagnostic) (fade, warning protocol.Diagnostic) {
	t.Helper()
	if len(diags) != 2 {
		t.Fatalf("got %d diagnostics, want the faded range and one warning: %+v", len(diags), diags)
	}
	for _, d := range diags {
		if d.Severity == protocol.DiagnosticSeverityHint {
			fade = d
		} else {
			warning = d
		}
	}
	if fade.Severity == 0 || warning.Severity == 0 {
		t.Fatalf("want one hint and one warning or error: %+v", diags)
	}
	if tags := fade.Tags.Slice(); len(tags) != 1 || tags[0] != protocol.DiagnosticTagUnnecessary {
		t.Errorf("the faded range has tags %v, want unnecessary", tags)
	}
	if tags := warning.Tags.Slice(); len(tags) != 0 {
		t.Errorf("the warning has tags %v, want none (it is not faded)", tags)
	}
	if warning.Range.Start != fade.Range.Start || warning.Range.End.Line != warning.Range.Start.Line {
		t.Errorf("the warning %+v is not on the first line of the cut %+v", warning.Range, fade.Range)
	}
	return fade, warning
}

// The cut is faded, not squiggled line by line: one hint tagged
// unnecessary over the exact range, and one warning on its first line.
func TestTruncationDiagnosticIsTheDroppedRange(t *testing.T) {
	root := writeFiles(t, map[string]string{"SOUL.md": "short\n", "AGENTS.md": "# Agents\n"})
	s := startSession(t, root)
	soul := longText(25000)
	s.open("SOUL.md", soul)
	fade, d := splitBudget(t, s.diagnostics("SOUL.md"))
	m := newMapper(soul)
	start, end := m.offset(fade.Range.Start), m.offset(fade.Range.End)
	// Independently of the server: the head before the range and the tail
	// after it are what the prompt keeps, and their sizes are in the message.
	head, tail := utf8.RuneCountInString(soul[:start]), utf8.RuneCountInString(soul[end:])
	msg := string(d.Message.(protocol.String))
	if !strings.Contains(msg, "kept "+prompt.GroupThousands(head)+" + "+prompt.GroupThousands(tail)) {
		t.Errorf("range keeps %d + %d chars, message says %q", head, tail, msg)
	}
	if !strings.Contains(msg, "25,000 chars") || !strings.Contains(msg, "20,000") {
		t.Errorf("message lacks the numbers: %q", msg)
	}
	if head+tail > 20000 || head < 13000 || tail < 3000 {
		t.Errorf("kept %d + %d chars of 25,000 with a per-file budget of 20,000", head, tail)
	}
	if d.Range.End.Line != d.Range.Start.Line || m.offset(d.Range.End) != m.lineEnd(int(d.Range.Start.Line)) {
		t.Errorf("warning range %+v, want the first line of the cut", d.Range)
	}
	if d.Severity != protocol.DiagnosticSeverityWarning {
		t.Errorf("severity = %v, want warning under the truncate policy", d.Severity)
	}

	// Under budget again: the diagnostics are cleared with an empty list.
	s.change("SOUL.md", 2, longText(1000))
	if diags := s.diagnostics("SOUL.md"); diags == nil || len(diags) != 0 {
		t.Errorf("after the edit: %+v, want []", diags)
	}
}

func TestTotalBudgetDiagnosticFollowsAGENTS(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", "SOUL.md": "x\n"})
	s := startSession(t, root)
	s.open("SOUL.md", longText(15000))
	s.quiet() // 15,000 + 9 chars fit the total of 24,000, under 80 % of the per-file budget: nothing to say
	s.open("AGENTS.md", "# Agents\n")
	s.change("AGENTS.md", 2, longText(10000))
	_, d := splitBudget(t, s.diagnostics("SOUL.md"))
	msg := string(d.Message.(protocol.String))
	if !strings.Contains(msg, "clamped by the total budget of 24,000") || !strings.Contains(msg, "AGENTS.md used 10,000 chars") {
		t.Errorf("message = %q, want it to name AGENTS.md and the total budget", msg)
	}
	s.change("AGENTS.md", 3, "# Agents\n")
	if diags := s.diagnostics("SOUL.md"); len(diags) != 0 {
		t.Errorf("after AGENTS.md shrank: %+v, want []", diags)
	}
}

func TestDroppedFileNamesWhoUsedTheBudget(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"agent.yaml": "name: tiny\nbudget:\n  per_file: 1000\n  total: 1500\n  min_file: 400\n",
		"AGENTS.md":  longText(900),
		"SOUL.md":    longText(900),
		"TOOLS.md":   "# Tools\nA shell.\n",
	})
	s := startSession(t, root)
	s.open("TOOLS.md", "# Tools\nA shell.\n")
	fade, d := splitBudget(t, s.diagnostics("TOOLS.md"))
	msg := string(d.Message.(protocol.String))
	if !strings.Contains(msg, "not in the prompt") || !strings.Contains(msg, "AGENTS.md and SOUL.md") {
		t.Errorf("message = %q", msg)
	}
	if want := (protocol.Range{End: protocol.Position{Line: 2}}); fade.Range != want {
		t.Errorf("faded range = %+v, want the whole file %+v", fade.Range, want)
	}
	if want := (protocol.Range{End: protocol.Position{Line: 0, Character: 7}}); d.Range != want {
		t.Errorf("warning range = %+v, want line 1 %+v", d.Range, want)
	}
}

func TestRejectPolicyIsAnError(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: strict\npolicy: reject\n", "SOUL.md": "x\n"})
	s := startSession(t, root)
	s.open("SOUL.md", longText(21000))
	_, d := splitBudget(t, s.diagnostics("SOUL.md"))
	if d.Severity != protocol.DiagnosticSeverityError {
		t.Fatalf("diagnostic = %+v, want an error", d)
	}
	msg := string(d.Message.(protocol.String))
	if !strings.Contains(msg, "reject") || !strings.Contains(msg, "1,000") || !strings.Contains(msg, "push") {
		t.Errorf("message = %q, want the policy, how much to cut and that a push is refused", msg)
	}
	// It says each thing once, and nothing is cut from a prompt: the push
	// is refused instead.
	if strings.Count(msg, "21,000") != 1 || strings.Count(msg, "reject") != 1 || strings.Contains(msg, "cut from the prompt") {
		t.Errorf("message = %q repeats itself or says the text is cut from the prompt", msg)
	}
}

func TestAgentYAMLProblemsHaveTheirLine(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\ncolour: blue\n"})
	s := startSession(t, root)
	s.open("agent.yaml", "name: a\ncolour: blue\n")
	diags := s.diagnostics("agent.yaml")
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1: %+v", len(diags), diags)
	}
	if diags[0].Range.Start.Line != 1 || diags[0].Severity != protocol.DiagnosticSeverityError {
		t.Errorf("diagnostic = %+v, want an error on line 2", diags[0])
	}
	s.change("agent.yaml", 2, "name: a\n")
	if diags := s.diagnostics("agent.yaml"); len(diags) != 0 {
		t.Errorf("after the fix: %+v", diags)
	}
}

// A change on disk (git checkout, another tool) to a file that is not open
// re-diagnoses the open ones: the server watches the workspace itself.
func TestDiskChangeUpdatesDiagnostics(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", "SOUL.md": "x\n"})
	s := startSessionWith(t, root, Options{Watch: true})
	s.open("SOUL.md", longText(15000))
	s.quiet()
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(longText(10000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, d := splitBudget(t, s.diagnostics("SOUL.md")); !strings.Contains(string(d.Message.(protocol.String)), "AGENTS.md used 10,000 chars") {
		t.Fatalf("after AGENTS.md changed on disk: %+v", d)
	}
	// AGENTS.md itself is not open, but its diagnostics are published too
	// when it has some; here it has none.
}

// The agent lint seam (skills.CheckAgent in `quire lsp`): its problems are
// placed on their lines in the editor's view of the files.
func TestCheckAgentProblemsBecomeDiagnostics(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\n", "skills/pdf/SKILL.md": "---\nname: PDF\n---\n"})
	var sawBuffer bool
	check := func(fsys fs.FS, agentDir string) []workspace.Problem {
		data, _ := fs.ReadFile(fsys, "skills/pdf/SKILL.md")
		sawBuffer = strings.Contains(string(data), "description")
		return []workspace.Problem{{Path: "skills/pdf/SKILL.md", Line: 2, Column: 7, Severity: workspace.SeverityError, Code: "skill-name", Message: "name must be lower case"}}
	}
	s := startSessionWith(t, root, Options{CheckAgent: check})
	s.open("skills/pdf/SKILL.md", "---\nname: PDF\ndescription: x\n---\n")
	diags := s.diagnostics("skills/pdf/SKILL.md")
	if len(diags) != 1 || diags[0].Range.Start != (protocol.Position{Line: 1, Character: 6}) || diags[0].Range.End != (protocol.Position{Line: 1, Character: 9}) {
		t.Fatalf("diagnostics = %+v", diags)
	}
	if !sawBuffer {
		t.Error("the lint read the disk, not the editor's buffer")
	}
}

// A context file that is not open but has bytes that are not UTF-8 on disk
// gets a diagnostic too, once any file of its agent is open.
func TestClosedFileWithInvalidUTF8(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", "TOOLS.md": "# Tools \xff\n"})
	s := startSession(t, root)
	s.open("AGENTS.md", "# Agents\n")
	diags := s.diagnostics("TOOLS.md")
	if len(diags) != 1 || diags[0].Code != protocol.String("invalid-utf8") {
		t.Fatalf("TOOLS.md: %+v", diags)
	}
}

// SKILL.md problems come from the skills package, on their line.
func TestSkillProblems(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\n", "AGENTS.md": "# A\n"})
	s := startSession(t, root)
	s.open("skills/pdf/SKILL.md", "---\nname: PDF Tool\ndescription: Converts PDFs.\n---\n# PDF\n")
	diags := s.diagnostics("skills/pdf/SKILL.md")
	if len(diags) == 0 || diags[0].Range.Start.Line != 1 {
		t.Fatalf("diagnostics = %+v, want a problem on the name line", diags)
	}
	s.change("skills/pdf/SKILL.md", 2, "---\nname: pdf\ndescription: Converts PDFs.\n---\n# PDF\n")
	if diags := s.diagnostics("skills/pdf/SKILL.md"); len(diags) != 0 {
		t.Errorf("after the fix: %+v", diags)
	}
}

// What `quire check` says about names reaches the editor too.
func TestMisspelledContextFile(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# A\n", "Soul.md": "# Soul\n"})
	s := startSession(t, root)
	s.open("Soul.md", "# Soul\n")
	diags := s.diagnostics("Soul.md")
	if len(diags) != 1 || !strings.Contains(string(diags[0].Message.(protocol.String)), "rename it to SOUL.md") {
		t.Fatalf("Soul.md: %+v", diags)
	}
}

// A file whose lines end in a lone "\r" (classic Mac) has lines: the cut is
// placed on them, not on one line 14,000 characters long; and a document
// named file://localhost/… is the workspace file it names.
func TestLoneCRAndLocalhostURIs(t *testing.T) {
	root := writeFiles(t, map[string]string{"SOUL.md": "short\n", "AGENTS.md": "# Agents\n"})
	s := startSession(t, root)
	soul := strings.ReplaceAll(longText(25000), "\n", "\r")
	u := uri.URI("file://localhost" + filepath.ToSlash(filepath.Join(root, "SOUL.md")))
	err := s.server.DidOpen(context.Background(), &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: u, LanguageID: "markdown", Version: 1, Text: soul}})
	if err != nil {
		t.Fatal(err)
	}
	var diags []protocol.Diagnostic
	select {
	case p := <-s.client.diags:
		if p.URI != u {
			t.Fatalf("diagnostics for %s, want %s", p.URI, u)
		}
		diags = p.Diagnostics
	case <-time.After(5 * time.Second):
		t.Fatalf("no diagnostics for %s: a file://localhost URI is not taken for the workspace file", u)
	}
	fade, warning := splitBudget(t, diags)
	lines := strings.Count(soul, "\r")
	if fade.Range.Start.Line == 0 || fade.Range.End.Line == 0 || int(fade.Range.End.Line) > lines {
		t.Errorf("faded range %+v, want it on the lines (there are %d)", fade.Range, lines)
	}
	if warning.Range.End.Character > 200 {
		t.Errorf("warning range %+v spans more than one line", warning.Range)
	}
}

// An allow-list name that matches no skill is a warning on its line, as
// `quire check` says it; a name the agent's own skills have is not.
func TestAllowListNamesUnknownSkill(t *testing.T) {
	files := map[string]string{
		"agent.yaml":          "name: a\nskills: [pdf, nope]\n",
		"AGENTS.md":           "# A\n",
		"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Converts PDFs.\n---\n# PDF\n",
	}
	root := writeFiles(t, files)
	s := startSession(t, root)
	s.open("agent.yaml", files["agent.yaml"])
	diags := s.diagnostics("agent.yaml")
	if len(diags) != 1 || !strings.Contains(string(diags[0].Message.(protocol.String)), `"nope" matches no skill`) || diags[0].Range.Start.Line != 1 ||
		diags[0].Severity != protocol.DiagnosticSeverityWarning {
		t.Fatalf("diagnostics = %+v, want one warning on line 2 naming nope", diags)
	}
	s.change("agent.yaml", 2, "name: a\nskills: [pdf]\n")
	if diags := s.diagnostics("agent.yaml"); len(diags) != 0 {
		t.Errorf("after the fix: %+v", diags)
	}
}

// A name a typo away from a context file's is flagged in the editor as
// `quire check` flags it.
func TestNearMissContextFileName(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENT.md": "# A\n", "SOUL.md": "# Soul\n"})
	s := startSession(t, root)
	s.open("AGENT.md", "# A\n")
	diags := s.diagnostics("AGENT.md")
	if len(diags) != 1 || !strings.Contains(string(diags[0].Message.(protocol.String)), "rename it to AGENTS.md") {
		t.Fatalf("AGENT.md: %+v", diags)
	}
}

// A context file at 80 % of its budget draws the warning quire check and
// the push report give.
func TestNearBudgetDiagnostic(t *testing.T) {
	body := strings.Repeat("a", 850) + "\n"
	root := writeFiles(t, map[string]string{"agent.yaml": "name: bot\nbudget:\n  per_file: 1000\n", "AGENTS.md": body})
	s := startSession(t, root)
	s.open("AGENTS.md", body)
	diags := s.diagnostics("AGENTS.md")
	if len(diags) != 1 || !strings.Contains(string(diags[0].Message.(protocol.String)), "85 % of the per-file budget of 1,000") {
		t.Fatalf("AGENTS.md at 85 %%: %+v", diags)
	}
}
