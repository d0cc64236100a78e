package gitsync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSnapshotFS(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{
		"AGENTS.md":              "# agents\n",
		"memory/2026-01-01.md":   "day one\n",
		"memory/deep/x.md":       "deep\n",
		"skills/pdf/SKILL.md":    "---\nname: pdf\n---\n",
		"a.b":                    "sorts before a/ in fs order\n",
		"a/c":                    "inside a\n",
		"users/alice/USER.md":    "alice\n",
		"empty-looking/only.txt": "",
		"bin/run.sh":             "#!/bin/sh\n",
	})
	if err := os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("AGENTS.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	head := git(t, dir, "rev-parse", "HEAD")
	// A submodule entry (gitlink) pointing at some commit.
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	git(t, dir, "commit", "-q", "-m", "second")
	git(t, dir, "tag", "v1")
	second := git(t, dir, "rev-parse", "HEAD")

	r, err := Open(filepath.Join(dir, "memory")) // inside the work tree
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{"HEAD", "main", "v1", second[:8], second, "refs/heads/main"} {
		s, err := r.Snapshot(rev)
		if err != nil {
			t.Fatalf("Snapshot(%q): %v", rev, err)
		}
		if s.Commit().String() != second {
			t.Errorf("Snapshot(%q).Commit() = %s, want %s", rev, s.Commit(), second)
		}
	}
	s, err := r.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(s, "AGENTS.md", "memory/2026-01-01.md", "memory/deep/x.md", "skills/pdf/SKILL.md", "a.b", "a/c", "bin/run.sh", "link.md", "empty-looking/only.txt"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		mode     fs.FileMode
		content  string
		notExist bool
	}{
		{name: "AGENTS.md", mode: 0o644, content: "# agents\n"},
		{name: "bin/run.sh", mode: 0o755, content: "#!/bin/sh\n"},
		{name: "link.md", mode: fs.ModeSymlink | 0o777, content: "AGENTS.md"},
		{name: "sub", notExist: true},
		{name: "missing.md", notExist: true},
		{name: "AGENTS.md/x", notExist: true},
	}
	for _, tt := range tests {
		info, err := fs.Stat(s, tt.name)
		if tt.notExist {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat(%q) error = %v, want not exist", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Stat(%q): %v", tt.name, err)
		}
		if info.Mode() != tt.mode {
			t.Errorf("Stat(%q).Mode() = %v, want %v", tt.name, info.Mode(), tt.mode)
		}
		b, err := fs.ReadFile(s, tt.name)
		if err != nil || string(b) != tt.content {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", tt.name, b, err, tt.content)
		}
	}
	names := []string{}
	es, err := s.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		names = append(names, e.Name())
	}
	if got, want := strings.Join(names, " "), "AGENTS.md a a.b bin empty-looking link.md memory skills users"; got != want {
		t.Errorf("ReadDir(.) = %s, want %s", got, want)
	}
}

func TestOpenBare(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"SOUL.md": "soul\n"})
	bare := filepath.Join(t.TempDir(), "b.git")
	git(t, dir, "clone", "-q", "--bare", dir, bare)
	r, err := Open(bare)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Snapshot("main")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ReadFile("SOUL.md")
	if err != nil || string(b) != "soul\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := r.Snapshot("nope"); err == nil {
		t.Fatal("Snapshot(nope) succeeded")
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Fatal("Open of a non-repository succeeded")
	}
}
