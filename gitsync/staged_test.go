package gitsync

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestStaged reads what the index holds, not the disk: the staged
// content, modes and links, nothing untracked, no submodule.
func TestStaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := strings.Repeat("x", 3<<19) // over MaxFileBytes: read when opened
	dir := newWorkRepo(t, map[string]string{
		"agent.yaml":           "name: first\n",
		"memory/2026-01-01.md": "# old\n",
		"tools/run.sh":         "#!/bin/sh\n",
		"agents/bot/SOUL.md":   "# bot\n",
		"big.bin":              big,
	})
	writeFiles(t, dir, map[string]string{"agent.yaml": "name: staged\n"})
	if err := os.Chmod(filepath.Join(dir, "tools/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("agent.yaml", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	head := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	writeFiles(t, dir, map[string]string{"agent.yaml": "name: disk\n", "untracked.md": "# new\n"})

	s, err := OpenStaged(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(s, "agent.yaml", "memory/2026-01-01.md", "tools/run.sh", "agents/bot/SOUL.md", "big.bin", "link.md"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"agent.yaml": "name: staged\n", "big.bin": big, "link.md": "agent.yaml"} {
		if b, err := s.ReadFile(name); err != nil || string(b) != want {
			t.Errorf("ReadFile(%s) = %.40q, %v; want %.40q", name, b, err, want)
		}
	}
	for name, want := range map[string]fs.FileMode{"tools/run.sh": 0o755, "link.md": fs.ModeSymlink | 0o777, "agent.yaml": 0o644, "tools": fs.ModeDir | 0o755} {
		if fi, err := s.Stat(name); err != nil || fi.Mode() != want {
			t.Errorf("Stat(%s) = %v, %v; want mode %v", name, fi, err, want)
		}
	}
	for _, name := range []string{"untracked.md", "sub"} {
		if _, err := s.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%s) = %v; want it left out", name, err)
		}
	}
	if got := s.Unmerged(); len(got) != 0 {
		t.Errorf("Unmerged = %q; want none", got)
	}

	// A subdirectory's index has paths relative to it.
	sub, err := OpenStaged(ctx, filepath.Join(dir, "memory"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "2026-01-01.md"); err != nil {
		t.Fatal(err)
	}

	if _, err := OpenStaged(ctx, t.TempDir()); !errors.Is(err, ErrNotWorkTree) {
		t.Errorf("OpenStaged outside a work tree: %v; want ErrNotWorkTree", err)
	}
}

// TestStagedUnmerged leaves a conflicted path out and lists it.
func TestStagedUnmerged(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"SOUL.md": "base\n", "agent.yaml": "name: a\n"})
	git(t, dir, "checkout", "-q", "-b", "other")
	writeFiles(t, dir, map[string]string{"SOUL.md": "theirs\n"})
	git(t, dir, "commit", "-q", "-am", "theirs")
	git(t, dir, "checkout", "-q", "main")
	writeFiles(t, dir, map[string]string{"SOUL.md": "ours\n"})
	git(t, dir, "commit", "-q", "-am", "ours")
	if _, err := gitTry(dir, "merge", "other"); err == nil {
		t.Fatal("merge succeeded; want a conflict")
	}
	s, err := OpenStaged(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Unmerged(); !slices.Equal(got, []string{"SOUL.md"}) {
		t.Errorf("Unmerged = %q; want [SOUL.md]", got)
	}
	if err := fstest.TestFS(s, "agent.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat("SOUL.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(SOUL.md) = %v; want it left out", err)
	}
}

// TestStagedMissingBlob names the file whose staged blob is not there.
func TestStagedMissingBlob(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"agent.yaml": "name: a\n"})
	git(t, dir, "update-index", "--add", "--info-only", "--cacheinfo", "100644,"+strings.Repeat("ab", 20)+",SOUL.md")
	_, err := OpenStaged(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "SOUL.md: its staged blob abab") {
		t.Errorf("OpenStaged = %v; want the missing blob's file named", err)
	}
}
