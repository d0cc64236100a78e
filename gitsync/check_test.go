package gitsync

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/quirehq/quire/workspace"
)

// A refused push is logged with its reason, not only as a count.
func TestRefusedPushIsLoggedWithItsReason(t *testing.T) {
	var logs syncBuffer
	_, url, _ := testHost(t, HostOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	work := newWorkRepo(t, map[string]string{"AGENTS.md": "# A\n"})
	if err := os.Symlink("AGENTS.md", filepath.Join(work, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "link")
	if out, err := gitTry(work, "push", url+"/ws.git", "main"); err == nil {
		t.Fatalf("the push of a symbolic link was accepted:\n%s", out)
	}
	got := logs.String()
	if !strings.Contains(got, "push refused") || !strings.Contains(got, "refs/heads/main") || !strings.Contains(got, "SOUL.md: symbolic links are not allowed") {
		t.Fatalf("log:\n%s", got)
	}
}

// Check's file rules, on a working tree: each refused file is named with
// its reason, whether or not a prompt reads it, and nothing else is said
// about it.
func TestCheckFileRules(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"agent.yaml":           "name: a\n",
		"AGENTS.md":            "# A\n",
		"TOOLS.md":             "caf\xe9\n",
		"memory/2026-01-01.md": strings.Repeat("a long day\n", 110_000),
		"data.bin":             strings.Repeat("\xff", 2<<20),
	})
	for name, target := range map[string]string{"SOUL.md": "/etc/passwd", "notes.txt": "AGENTS.md", "linked": "memory"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "MEMORY.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range Check(context.Background(), workspace.DirFS(root), CheckOptions{}) {
		if p.Severity == workspace.SeverityError {
			if prev, ok := got[p.Path]; ok {
				t.Errorf("%s: two errors: %s and %s", p.Path, prev, p.Code)
			}
			got[p.Path] = p.Code
		}
	}
	want := map[string]string{
		"SOUL.md": "symlink", "notes.txt": "symlink", "linked": "symlink", "MEMORY.md": "special-file",
		"TOOLS.md": "invalid-utf8", "memory/2026-01-01.md": "file-too-large", "data.bin": "file-too-large",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("errors by file:\n got %v\nwant %v", got, want)
	}
}

// A committed link is not read as its target path: checked on a commit,
// a linked agent.yaml is refused as a link, like in the working tree, and
// not parsed as YAML.
func TestCheckCommittedLink(t *testing.T) {
	work := newWorkRepo(t, map[string]string{"real.yaml": "name: a\n", "AGENTS.md": "# A\n"})
	if err := os.Symlink("real.yaml", filepath.Join(work, "agent.yaml")); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "link")
	repo, err := Open(work)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, p := range Errors(Check(context.Background(), snap, CheckOptions{})) {
		codes = append(codes, p.Path+"|"+p.Code)
	}
	if !slices.Equal(codes, []string{"agent.yaml|symlink"}) {
		t.Fatalf("errors: %q", codes)
	}
}
