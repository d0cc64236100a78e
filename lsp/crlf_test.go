package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
)

// TestPreviewOfCRLFCheckout: a workspace committed with LF and cloned with
// core.autocrlf=true (a Windows checkout: CR LF in every file) previews
// the prompt of the commit byte for byte, with its SOUL.md open in the
// editor as it is on disk, and the cut is faded on the same lines as in
// the LF tree.
func TestPreviewOfCRLFCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	src := writeFiles(t, map[string]string{
		"agent.yaml":          "name: lucia\ntimezone: Europe/Lisbon\n",
		"AGENTS.md":           "# Agents\nBe helpful.\nAnswer briefly.\n",
		"SOUL.md":             longText(22000),
		"TOOLS.md":            "# Tools\n\n- search\n- convert\n",
		"users/ines/USER.md":  "# Inês\nLikes coffee.\n",
		"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Turn PDFs into Markdown.\n---\nRun {baseDir}/convert.sh\n",
	})
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(src, "init", "-q")
	git(src, "add", "-A")
	git(src, "-c", "core.autocrlf=false", "commit", "-q", "-m", "lf")
	clone := filepath.Join(t.TempDir(), "clone")
	git(src, "-c", "core.autocrlf=true", "clone", "-q", src, clone)
	soul, err := os.ReadFile(filepath.Join(clone, "SOUL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(soul, []byte("\r\n")) {
		t.Fatal("the autocrlf clone has no CR LF: the test would prove nothing")
	}

	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	preview := func(root string) (prompt.Result, []protocol.Diagnostic) {
		s := startSession(t, root)
		text, err := os.ReadFile(filepath.Join(root, "SOUL.md"))
		if err != nil {
			t.Fatal(err)
		}
		s.open("SOUL.md", string(text))
		diags := s.diagnostics("SOUL.md")
		raw, err := s.server.ExecuteCommand(context.Background(), &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{
			[]byte(`{"agent":"lucia","user":"ines","session":"main","channel":"dm","now":"` + now.Format(time.RFC3339) + `"}`),
		}})
		if err != nil {
			t.Fatal(err)
		}
		var res prompt.Result
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		return res, diags
	}
	lf, lfDiags := preview(src)
	crlf, crlfDiags := preview(clone)
	if crlf.Prompt != lf.Prompt {
		t.Errorf("the CR LF checkout previews %d bytes, the commit's LF tree %d: not the same prompt", len(crlf.Prompt), len(lf.Prompt))
	}
	if bytes.Contains([]byte(crlf.Prompt), []byte("\r")) {
		t.Error("a CR reached the prompt")
	}
	lfJSON, _ := json.Marshal(lf.Report)
	crlfJSON, _ := json.Marshal(crlf.Report)
	if !bytes.Equal(lfJSON, crlfJSON) {
		t.Errorf("reports differ:\n%s\n%s", lfJSON, crlfJSON)
	}
	if len(lfDiags) == 0 || len(lfDiags) != len(crlfDiags) {
		t.Fatalf("SOUL.md diagnostics: %d in the LF tree, %d in the CR LF one", len(lfDiags), len(crlfDiags))
	}
	for i := range lfDiags {
		if lfDiags[i].Range != crlfDiags[i].Range {
			t.Errorf("diagnostic %d (%s) on %v in the LF tree, on %v in the CR LF one", i, lfDiags[i].Message, lfDiags[i].Range, crlfDiags[i].Range)
		}
	}
}
