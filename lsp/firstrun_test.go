package lsp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
)

// TestPreviewNewUserHasFirstRun: the preview for a user with no files yet
// holds their seeded USER.md and BOOTSTRAP.md (the template bytes) and the
// First Run section, as the daemon serves it, for both agent types.
func TestPreviewNewUserHasFirstRun(t *testing.T) {
	for _, tc := range []struct {
		typ      string
		template string
	}{{"predefined", templates.BootstrapPredefined}, {"open", "BOOTSTRAP.md"}} {
		t.Run(tc.typ, func(t *testing.T) {
			root := writeFiles(t, map[string]string{
				"agent.yaml": "name: lucia\ntype: " + tc.typ + "\n",
				"AGENTS.md":  "# Agents\nBe helpful.\n",
				"SOUL.md":    "# Soul\n",
			})
			s := startSession(t, root)
			raw, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
				[]byte(`{"agent":"lucia","user":"newbie","session":"main","channel":"dm"}`),
			}})
			if err != nil {
				t.Fatal(err)
			}
			var got prompt.Result
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			boot, err := templates.Template(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.Prompt, "## First Run\n") || !strings.Contains(got.Prompt, "<context_file name=\"BOOTSTRAP.md\">\n"+string(boot)) ||
				!strings.Contains(got.Prompt, "<context_file name=\"USER.md\">\n") {
				t.Errorf("the preview for a new user lacks the First Run section, the BOOTSTRAP.md template or USER.md:\n%s", got.Prompt)
			}
		})
	}
}
