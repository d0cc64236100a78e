package lsp

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
)

// TestPreviewModes: the preview takes a mode and shows the bytes
// prompt.Assemble gives for it (what the CLI, the API and MCP serve).
func TestPreviewModes(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"agent.yaml": "name: lucia\n",
		"AGENTS.md":  "# Agents\nBe helpful.\n",
		"SOUL.md":    "# Soul\nWarm.\n",
		"TOOLS.md":   "# Tools\n",
		"MEMORY.md":  "# Memory\nRemember this.\n",
	})
	s := startSession(t, root)
	ws, err := prompt.Open(os.DirFS(root), prompt.Options{Seeds: templates.Seeds})
	if err != nil {
		t.Fatal(err)
	}
	set := skills.Load(1, skills.Options{WorkspaceDir: root}.Sources())
	for _, mode := range prompt.Modes {
		raw, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
			[]byte(`{"agent":"lucia","mode":"` + string(mode) + `","now":"2026-11-22T12:00:00Z"}`),
		}})
		if err != nil {
			t.Fatal(err)
		}
		var got prompt.Result
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		want, err := ws.Assemble(prompt.Request{Agent: "lucia", Mode: mode, Now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
			Skills: set.PromptSkills(skills.Request{Agent: "lucia"})})
		if err != nil {
			t.Fatal(err)
		}
		if got.Prompt != want.Prompt || got.Report.Mode != mode {
			t.Errorf("%s: the preview (%d bytes, mode %q) differs from prompt.Assemble (%d bytes)", mode, len(got.Prompt), got.Report.Mode, len(want.Prompt))
		}
	}
	if _, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
		[]byte(`{"agent":"lucia","mode":"lean"}`),
	}}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
