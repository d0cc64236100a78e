package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// TestPreviewTeamsAndTokens: the preview of an agent with a team,
// delegation and availability holds the same virtual and _shared/ files
// as prompt.Assemble (an unsaved _shared/CULTURE.md included), and the
// diagnostics of a file over a budget in tokens speak in tokens.
func TestPreviewTeamsAndTokens(t *testing.T) {
	files := map[string]string{}
	src := "../prompt/testdata/teams"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(src, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	root := writeFiles(t, files)
	s := startSession(t, root)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	culture := "# House culture\n\nEdited, not saved. UNSAVED-CULTURE\n"
	s.open("_shared/CULTURE.md", culture)
	raw, err := s.server.ExecuteCommand(ctx, &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
		[]byte(`{"agent":"concierge","session":"main","channel":"dm","now":"` + now.Format(time.RFC3339) + `"}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got prompt.Result
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "_shared", "CULTURE.md"), []byte(culture), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := prompt.Open(os.DirFS(root), prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := skills.Load(1, skills.Options{WorkspaceDir: filepath.Join(root, "agents", "concierge")}.Sources())
	want, err := ws.Assemble(prompt.Request{Agent: "concierge", Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now,
		Skills: set.PromptSkills(skills.Request{Agent: "concierge"})})
	if err != nil {
		t.Fatal(err)
	}
	if got.Prompt != want.Prompt || !strings.Contains(got.Prompt, "UNSAVED-CULTURE") || !strings.Contains(got.Prompt, `<system_context name="DELEGATION.md">`) {
		t.Errorf("preview differs from prompt.Assemble (%d vs %d bytes) or lacks the unsaved culture and the virtual files", len(got.Prompt), len(want.Prompt))
	}

	s.open("agents/night-porter/SOUL.md", files["agents/night-porter/SOUL.md"])
	waitDiagnostic(t, s, "agents/night-porter/SOUL.md", "SOUL.md is 1,335 tokens, over the per-file budget of 120 tokens")

	// A _shared/ file, which belongs to no agent, is diagnosed from the
	// agents' reports.
	s.change("_shared/CULTURE.md", 2, "# House culture\n\n"+longText(30000))
	waitDiagnostic(t, s, "_shared/CULTURE.md", "over the per-file budget of 20,000 chars")
}

// waitDiagnostic waits for a publication of name's diagnostics with one
// whose message holds want.
func waitDiagnostic(t *testing.T, s *session, name, want string) {
	t.Helper()
	var last []string
	for range 20 {
		last = last[:0]
		for _, d := range s.diagnostics(name) {
			msg := string(d.Message.(protocol.String))
			if strings.Contains(msg, want) {
				return
			}
			last = append(last, msg)
		}
	}
	t.Errorf("%s: no diagnostic says %q; the last said:\n%s", name, want, strings.Join(last, "\n"))
}
