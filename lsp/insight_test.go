package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

func docID(s *session, name string) protocol.TextDocumentIdentifier {
	return protocol.TextDocumentIdentifier{URI: s.uri(name)}
}

func TestCodeLensHoverAndInlayHints(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", "SOUL.md": "x\n"})
	s := startSession(t, root)
	ctx := context.Background()
	soul := longText(25000)
	s.open("SOUL.md", soul)
	s.diagnostics("SOUL.md")

	lenses, err := s.server.CodeLens(ctx, &protocol.CodeLensParams{TextDocument: docID(s, "SOUL.md")})
	if err != nil || len(lenses) != 1 {
		t.Fatalf("codeLens = %+v, %v", lenses, err)
	}
	// 25,000 chars against 20,000; about 18,000 (what truncation keeps) of
	// the 24,000 total is 75 %.
	if got, want := lenses[0].Command.Title, regexp.MustCompile(`^25,000 / 20,000 chars · 7\d % of total · Preview prompt$`); !want.MatchString(got) {
		t.Errorf("lens title = %q, want %s", got, want)
	}
	if lenses[0].Range.Start.Line != 0 || lenses[0].Command.Command != CommandPreviewPrompt {
		t.Errorf("lens = %+v", lenses[0])
	}
	var args PreviewArgs
	if err := json.Unmarshal(lenses[0].Command.Arguments[0], &args); err != nil || args.Agent != filepath.Base(root) || args.Session != "main" {
		t.Errorf("lens arguments = %s (%v)", lenses[0].Command.Arguments[0], err)
	}

	m := newMapper(soul)
	hints, err := s.server.InlayHint(ctx, &protocol.InlayHintParams{TextDocument: docID(s, "SOUL.md"), Range: protocol.Range{End: m.position(len(soul))}})
	if err != nil || len(hints) != 2 {
		t.Fatalf("inlayHint = %+v, %v", hints, err)
	}
	diags := s.currentDiagnostics(t, "SOUL.md")
	if hints[0].Position != diags[0].Range.Start || hints[1].Position != diags[0].Range.End {
		t.Errorf("hints at %+v and %+v, want the cut %+v", hints[0].Position, hints[1].Position, diags[0].Range)
	}

	inside := diags[0].Range.Start
	inside.Line++
	hover, err := s.server.Hover(ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: docID(s, "SOUL.md"), Position: inside}})
	if err != nil || hover == nil {
		t.Fatalf("hover = %v, %v", hover, err)
	}
	text := hover.Contents.(*protocol.MarkupContent).Value
	for _, want := range []string{"**SOUL.md** — truncated, 2nd of", "| file | 25,000 |", "| in the prompt | 1", "Per-file budget 20,000 chars: the file is 125 %", "does not reach the prompt"} {
		if !strings.Contains(text, want) {
			t.Errorf("hover lacks %q:\n%s", want, text)
		}
	}
	if hover.Range == nil || *hover.Range != diags[0].Range {
		t.Errorf("hover range = %v, want the cut", hover.Range)
	}
}

// currentDiagnostics computes the diagnostics of name now, without waiting
// for a publication.
func (s *session) currentDiagnostics(t *testing.T, name string) []protocol.Diagnostic {
	t.Helper()
	srv := s.serverState(t)
	return srv.diagnose(srv.currentView())[s.uri(name)]
}

func TestPreviewEqualsAssembleByteForByte(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"agent.yaml":           "name: lucia\ntimezone: Europe/Lisbon\n",
		"AGENTS.md":            "# Agents\nBe helpful.\n",
		"SOUL.md":              longText(22000),
		"TOOLS.md":             "# Tools\n",
		"users/ines/USER.md":   "# Inês\nLikes coffee.\n",
		"memory/2026-11-21.md": "- a daily note\n",
		"skills/pdf/SKILL.md":  "---\nname: pdf\ndescription: Turn PDFs into Markdown.\n---\nRun {baseDir}/convert.sh\n",
	})
	s := startSession(t, root)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

	edited := longText(21000) + "\nedited in the editor\n"
	s.open("SOUL.md", edited)
	raw, err := s.server.ExecuteCommand(ctx, &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
		[]byte(`{"agent":"lucia","user":"ines","session":"main","channel":"dm","now":"` + now.Format(time.RFC3339) + `"}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got prompt.Result
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}

	// The same bytes the daemon and `quire prompt` produce once the buffer is saved.
	if err := os.WriteFile(filepath.Join(root, "SOUL.md"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := prompt.Open(os.DirFS(root), prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Skills as `quire prompt` loads them (workspace tiers from disk, the
	// built-ins; no home directory in this session).
	set := skills.Load(1, skills.Options{WorkspaceDir: root}.Sources())
	want, err := ws.Assemble(prompt.Request{Agent: "lucia", User: "ines", Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now,
		Skills: set.PromptSkills(skills.Request{Agent: "lucia", User: "ines"})})
	if err != nil {
		t.Fatal(err)
	}
	if got.Prompt != want.Prompt {
		t.Errorf("preview differs from prompt.Assemble (%d vs %d bytes)", len(got.Prompt), len(want.Prompt))
	}
	if !strings.Contains(got.Prompt, "Likes coffee") || !strings.Contains(got.Prompt, "a daily note") || !strings.Contains(got.Prompt, "Turn PDFs into Markdown.") {
		t.Error("preview lacks the user's file, the daily log or the workspace skill")
	}
	if got.Report.InjectedChars != want.Report.InjectedChars || len(got.Report.Files) != len(want.Report.Files) {
		t.Errorf("report differs: %d vs %d chars", got.Report.InjectedChars, want.Report.InjectedChars)
	}

	// Positional arguments, and the agent taken from the document.
	raw, err = s.server.ExecuteCommand(ctx, &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
		[]byte(`"lucia"`), []byte(`""`), []byte(`"cron"`), []byte(`"dm"`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var cron prompt.Result
	if err := json.Unmarshal(raw, &cron); err != nil || len(cron.Report.Files) != 2 {
		t.Errorf("cron preview: %d files, %v; want AGENTS.md and TOOLS.md", len(cron.Report.Files), err)
	}
	if _, err := s.server.ExecuteCommand(ctx, &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
		[]byte(`{"uri":"` + string(s.uri("users/ines/USER.md")) + `","session":"bogus"}`),
	}}); err == nil {
		t.Error("an unknown session was accepted")
	}
	if _, err := s.server.ExecuteCommand(ctx, &protocol.ExecuteCommandParams{Command: "quire.nope"}); err == nil {
		t.Error("an unknown command succeeded")
	}
}

// The budget couples files: after an edit to AGENTS.md, the server asks
// the client to re-fetch SOUL.md's code lens and inlay hints.
func TestLensAndHintRefreshAfterChange(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", "SOUL.md": "x\n"})
	yes := true
	caps := protocol.ClientCapabilities{Workspace: &protocol.WorkspaceClientCapabilities{
		CodeLens:  &protocol.CodeLensWorkspaceClientCapabilities{RefreshSupport: &yes},
		InlayHint: &protocol.InlayHintWorkspaceClientCapabilities{RefreshSupport: &yes},
	}}
	s := startSessionCaps(t, root, Options{}, caps)
	s.open("SOUL.md", longText(25000))
	s.diagnostics("SOUL.md")
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case what := <-s.client.refreshes:
			got[what] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("refreshes asked: %v, want codeLens and inlayHint", got)
		}
	}
}

func TestHoverExplainsKeys(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\n"})
	s := startSession(t, root)
	s.open("agent.yaml", "name: a\nbudget:\n  per_file: 1000\n")
	s.open("skills/pdf/SKILL.md", "---\ndescription: x\n---\nname: body text\n")
	tests := []struct {
		file string
		pos  protocol.Position
		want string // "" for no hover
	}{
		{"agent.yaml", protocol.Position{Line: 1, Character: 2}, "`budget`: per_file, total"},
		{"agent.yaml", protocol.Position{Line: 2, Character: 4}, "`per_file`: largest number of chars one context file"},
		{"skills/pdf/SKILL.md", protocol.Position{Line: 1, Character: 1}, "`description`: What the skill does"},
		{"skills/pdf/SKILL.md", protocol.Position{Line: 3, Character: 1}, ""},
	}
	for _, tt := range tests {
		h, err := s.server.Hover(context.Background(), &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: docID(s, tt.file), Position: tt.pos}})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tt.want == "" && h != nil:
			t.Errorf("%s %+v: unexpected hover %+v", tt.file, tt.pos, h.Contents)
		case tt.want != "" && (h == nil || !strings.HasPrefix(h.Contents.(*protocol.MarkupContent).Value, tt.want)):
			t.Errorf("%s %+v: hover %+v, want %q…", tt.file, tt.pos, h, tt.want)
		}
	}
}

func TestCodeLensOnlyOnContextFilesAndAgentYAML(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\n", "AGENTS.md": "# A\n"})
	s := startSession(t, root)
	s.open("README.md", "# Readme\n")
	s.open("agent.yaml", "name: a\n")
	for file, want := range map[string]string{"README.md": "", "agent.yaml": "context 4 / 24,000 chars · Preview prompt"} {
		lenses, err := s.server.CodeLens(context.Background(), &protocol.CodeLensParams{TextDocument: docID(s, file)})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == "" && len(lenses) != 0:
			t.Errorf("%s: lenses %+v, want none", file, lenses)
		case want != "" && (len(lenses) != 1 || lenses[0].Command.Title != want):
			t.Errorf("%s: lenses %+v, want %q", file, lenses, want)
		}
	}
}

// The hover's "Cut: lines" names the lines that are cut, not the first one
// kept: a dropped two-line file is lines 1–2, as `quire prompt --report`
// says.
func TestHoverCutLines(t *testing.T) {
	tools := "# Tools\nA shell.\n"
	root := writeFiles(t, map[string]string{
		"agent.yaml": "name: tiny\nbudget:\n  per_file: 1000\n  total: 1500\n  min_file: 400\n",
		"AGENTS.md":  longText(900),
		"SOUL.md":    longText(900),
		"TOOLS.md":   tools,
	})
	s := startSession(t, root)
	s.open("TOOLS.md", tools)
	s.diagnostics("TOOLS.md")
	hover, err := s.server.Hover(context.Background(), &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: docID(s, "TOOLS.md")}})
	if err != nil || hover == nil {
		t.Fatalf("hover = %v, %v", hover, err)
	}
	if text := hover.Contents.(*protocol.MarkupContent).Value; !strings.Contains(text, "Cut: lines 1–2, 17 chars.") {
		t.Errorf("hover:\n%s\nwant Cut: lines 1–2, 17 chars.", text)
	}
	a := s.srv.analyses.of(s.srv.currentView().fsys)
	_, rep, _, ok := a.fileReport("TOOLS.md", s.srv.now())
	if !ok {
		t.Fatal("no report for TOOLS.md")
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "cut lines 1–2 (bytes 0–17)") {
		t.Errorf("the report (as quire prompt --report prints it) lacks cut lines 1–2 (bytes 0–17):\n%s", text.String())
	}
}

// TestPreviewNeverReadsThroughALink: a SOUL.md that links out of the
// workspace is not read on disk (the preview fails or leaves it out), so
// nothing outside the tree reaches a prompt.
func TestPreviewNeverReadsThroughALink(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"agent.yaml": "name: lucia\n",
		"AGENTS.md":  "# Agents\nBe helpful.\n",
	})
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, root)
	raw, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
		[]byte(`{"agent":"lucia","session":"main","channel":"dm"}`),
	}})
	if err == nil && strings.Contains(string(raw), "TOP SECRET") {
		t.Fatal("the preview read SOUL.md through a link out of the workspace")
	}
}

// The language server takes the managed skills directory as the CLI and
// the daemon do (--skills-dir, issue #13 item 11): its preview holds the
// managed skill, byte for byte what `quire prompt --skills-dir` assembles.
func TestPreviewWithSkillsDir(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: lucia\n", "AGENTS.md": "# Agents\nBe helpful.\n"})
	managed := writeFiles(t, map[string]string{"invoices/SKILL.md": "---\nname: invoices\ndescription: Shared invoice filing.\n---\nFile them.\n"})
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	args := []protocol.LSPAny{[]byte(`{"agent":"lucia","session":"main","channel":"dm","now":"` + now.Format(time.RFC3339) + `"}`)}
	preview := func(opts Options) string {
		t.Helper()
		s := startSessionWith(t, root, opts)
		raw, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var got prompt.Result
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		return got.Prompt
	}
	if got := preview(Options{}); strings.Contains(got, "Shared invoice filing") {
		t.Fatal("a managed skill without SkillsDir")
	}
	got := preview(Options{SkillsDir: managed})
	ws, err := prompt.Open(os.DirFS(root), prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := skills.Load(1, skills.Options{WorkspaceDir: root, ManagedDir: managed}.Sources())
	want, err := ws.Assemble(prompt.Request{Agent: "lucia", Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now,
		Skills: set.PromptSkills(skills.Request{Agent: "lucia"})})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Shared invoice filing") || got != want.Prompt {
		t.Errorf("preview with SkillsDir (%d bytes) differs from the assembly with the managed tier (%d bytes):\n%s", len(got), len(want.Prompt), got)
	}
}

// TestHoverContentFormat: hovers come in the first markup of the
// client's textDocument.hover.contentFormat; in plain text the budget
// table is aligned columns and no Markdown mark is left.
func TestHoverContentFormat(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", "SOUL.md": "x\n", "agent.yaml": "name: a\n"})
	soul := longText(25000)
	plainTable := "                chars  tokens\nfile           25,000  "
	for _, c := range []struct {
		name   string
		format []protocol.MarkupKind // nil: no hover capabilities at all
		kind   protocol.MarkupKind
		has    []string
	}{
		{"no preference", nil, protocol.MarkupKindMarkdown, []string{"**SOUL.md** — truncated", "| file | 25,000 |", "_This text does not reach the prompt._"}},
		{"markdown first", []protocol.MarkupKind{protocol.MarkupKindMarkdown, protocol.MarkupKindPlainText}, protocol.MarkupKindMarkdown, []string{"| in the prompt | "}},
		{"plain text only (Emacs without markdown-mode)", []protocol.MarkupKind{protocol.MarkupKindPlainText}, protocol.MarkupKindPlainText, []string{"SOUL.md — truncated", plainTable, "\nin the prompt  ", "This text does not reach the prompt."}},
		{"plain text first", []protocol.MarkupKind{protocol.MarkupKindPlainText, protocol.MarkupKindMarkdown}, protocol.MarkupKindPlainText, []string{plainTable}},
		{"an unknown kind, then plain text", []protocol.MarkupKind{"asciidoc", protocol.MarkupKindPlainText}, protocol.MarkupKindPlainText, []string{plainTable}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var caps protocol.ClientCapabilities
			if c.format != nil {
				caps.TextDocument = &protocol.TextDocumentClientCapabilities{Hover: &protocol.HoverClientCapabilities{ContentFormat: c.format}}
			}
			s := startSessionCaps(t, root, Options{}, caps)
			s.open("SOUL.md", soul)
			s.open("agent.yaml", "name: a\nbudget:\n  per_file: 1000\n")
			diags := s.diagnostics("SOUL.md")
			inside := diags[0].Range.Start
			inside.Line++
			h, err := s.server.Hover(context.Background(), &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: docID(s, "SOUL.md"), Position: inside}})
			if err != nil || h == nil {
				t.Fatalf("hover = %v, %v", h, err)
			}
			mc := h.Contents.(*protocol.MarkupContent)
			if mc.Kind != c.kind {
				t.Errorf("kind %s, want %s", mc.Kind, c.kind)
			}
			for _, want := range c.has {
				if !strings.Contains(mc.Value, want) {
					t.Errorf("hover lacks %q:\n%s", want, mc.Value)
				}
			}
			key, err := s.server.Hover(context.Background(), &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: docID(s, "agent.yaml"), Position: protocol.Position{Line: 1, Character: 2}}})
			if err != nil || key == nil {
				t.Fatalf("key hover = %v, %v", key, err)
			}
			keyText := key.Contents.(*protocol.MarkupContent)
			if c.kind == protocol.MarkupKindPlainText {
				for _, mark := range []string{"|", "**", "`", "_This"} {
					if strings.Contains(mc.Value, mark) || strings.Contains(keyText.Value, mark) {
						t.Errorf("plain text holds the Markdown mark %q:\n%s\n%s", mark, mc.Value, keyText.Value)
					}
				}
				if keyText.Kind != c.kind || !strings.HasPrefix(keyText.Value, "budget: per_file, total") {
					t.Errorf("key hover %+v, want plain text budget: per_file, total…", keyText)
				}
			} else if keyText.Kind != c.kind || !strings.HasPrefix(keyText.Value, "`budget`: ") {
				t.Errorf("key hover %+v, want Markdown", keyText)
			}
		})
	}
}
