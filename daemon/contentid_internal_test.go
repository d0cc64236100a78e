package daemon

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/workspace"
)

// TestContentID: a working tree's deployment id depends on its files
// only: the same files give the same id (across processes: it is a hash,
// not a counter), any change gives another, .git is ignored. The files
// here are all recent (racyWindow), so they are keyed by their bytes.
func TestContentID(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := func() string {
		s, err := contentID(workspace.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	write("AGENTS.md", "a\n")
	write("memory/2026-01-01.md", "x\n")
	first := id()
	if !strings.HasPrefix(first, "worktree:") || first != id() {
		t.Fatalf("id %q is not stable", first)
	}
	write(".git/HEAD", "ref: refs/heads/main\n")
	if id() != first {
		t.Error(".git changed the id")
	}
	write("memory/2026-01-01.md", "y\n")
	second := id()
	if second == first {
		t.Error("a changed file kept the id")
	}
	write("memory/2026-01-01.md", "x\n")
	if id() != first {
		t.Error("the same files again gave another id")
	}
	// A file moved between directories is a change.
	os.Remove(filepath.Join(dir, "memory/2026-01-01.md"))
	write("memory2/2026-01-01.md", "x\n")
	if id() == first {
		t.Error("a moved file kept the id")
	}
}

// TestContentIDFromStat: files older than racyWindow are keyed by their
// stat data: untouched they keep the id, and a change of their bytes
// changes it even with the size and modification time put back.
func TestContentIDFromStat(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "MEMORY.md")
	if err := os.WriteFile(p, []byte("wifi: abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour) // every change time is then old
	id := func() string {
		scan, err := scanTree(workspace.DirFS(dir), later)
		if err != nil {
			t.Fatal(err)
		}
		return scan.id
	}
	first := id()
	if id() != first {
		t.Fatal("an untouched tree changed its id")
	}
	if err := os.WriteFile(p, []byte("wifi: xyz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && id() == first {
		t.Error("a file's new bytes of the same size and time kept the id")
	}
	if err := os.WriteFile(p, []byte("wifi: abcd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id() == first {
		t.Error("a file of another size kept the id")
	}
}
