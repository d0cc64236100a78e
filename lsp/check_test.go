package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// The editor shows what `quire check` and a push refuse (agent.Check):
// a symbolic link and a daily log over 1 MiB, on their own files, even
// though neither is open and the link is not a file the prompt reads.
func TestEditorShowsWhatAPushRefuses(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"agent.yaml":           "name: a\n",
		"AGENTS.md":            "# A\n",
		"memory/2026-01-01.md": strings.Repeat("a long day\n", 110_000),
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, root)
	s.open("AGENTS.md", "# A\n")
	seen := map[string]string{}
	for len(seen) < 2 {
		name, diags := s.nextDiagnostics()
		for _, d := range diags {
			if c, ok := d.Code.(protocol.String); ok && d.Severity == protocol.DiagnosticSeverityError {
				seen[name] = string(c)
			}
		}
	}
	if seen["notes.txt"] != "symlink" || seen["memory/2026-01-01.md"] != "file-too-large" {
		t.Fatalf("errors by file: %v", seen)
	}
}

// nextDiagnostics waits for the next publication and names its file
// relative to the root.
func (s *session) nextDiagnostics() (string, []protocol.Diagnostic) {
	s.t.Helper()
	select {
	case p := <-s.client.diags:
		name, ok := filePath(p.URI)
		if !ok {
			s.t.Fatalf("not a file URI: %s", p.URI)
		}
		rel, err := filepath.Rel(s.root, name)
		if err != nil {
			s.t.Fatal(err)
		}
		return filepath.ToSlash(rel), p.Diagnostics
	case <-time.After(5 * time.Second):
		s.t.Fatal("no diagnostics published within 5 s")
		return "", nil
	}
}
