package lsp

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/workspace"
)

// TestPreviewInvalidAgentYAMLIsThePushError: with an unsaved agent.yaml
// the push would refuse, the preview answers the push's error (the
// findings agent.Check reports for the same bytes), never a prompt built
// from the default identity and time zone.
func TestPreviewInvalidAgentYAMLIsThePushError(t *testing.T) {
	for name, yaml := range map[string]string{
		"time zone":   "name: lucia\ntimezone: Mars/Olympus\n",
		"unknown key": "name: lucia\nidentiy: You are Lucia.\n",
		"budget":      "name: lucia\nbudget:\n  per_file: -5\n",
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"agent.yaml": "name: lucia\n", "AGENTS.md": "# Agents\n", "SOUL.md": "# Soul\n"}
			s := startSession(t, writeFiles(t, files))
			s.open("agent.yaml", yaml)
			_, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
				[]byte(`{"agent":"lucia","session":"main","channel":"dm"}`),
			}})
			if err == nil {
				t.Fatal("the preview built a prompt from an agent.yaml the push refuses")
			}
			files["agent.yaml"] = yaml
			var pushErrs []string
			for _, p := range agent.Check(context.Background(), os.DirFS(writeFiles(t, files)), agent.CheckOptions{}) {
				if p.Severity == workspace.SeverityError {
					pushErrs = append(pushErrs, p.String())
				}
			}
			if len(pushErrs) == 0 {
				t.Fatalf("agent.Check accepts %q: the case tests nothing", yaml)
			}
			for _, want := range pushErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the preview's error %q lacks the push's %q", err, want)
				}
			}
		})
	}
}
