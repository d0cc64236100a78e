package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/workspace"
)

// TestListedDirReadsAsTheDisk: a build's reads through the scan's
// listings answer what workspace.Dir answers (entries, bytes, and the
// same error for a missing directory or file, below a missing directory
// too), for names the scan listed and names it did not (.git, a link);
// once forgotten, the listings give way to the disk.
func TestListedDirReadsAsTheDisk(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"agents/a/agent.yaml": "name: a\n", "agents/a/memory/2026-01-01.md": "x\n",
		"agents/a/empty.md": "", ".git/HEAD": "ref: x\n", "AGENTS.md": "# root\n"})
	if err := os.Symlink("agents", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	disk := workspace.DirFS(dir)
	scan, err := scanTree(disk, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l := newListedDir(disk, scan.dirs)
	for _, name := range []string{".", "agents", "agents/a", "agents/a/memory", "agents/a/skills", "agents/a/.agents/skills",
		"agents/b/skills", "agents/a/agent.yaml", "agents/a/agent.yaml/x", "agents/a/empty.md", "agents/a/memory/2026-01-01.md",
		"agents/a/missing.md", "nowhere/deeper/still.md", ".git", ".git/HEAD", "link", "link/a", "AGENTS.md", "../x", "/abs"} {
		t.Run(name, func(t *testing.T) {
			got, gerr := l.ReadDir(name)
			want, werr := disk.ReadDir(name)
			if !reflect.DeepEqual(names(got), names(want)) || fmt.Sprint(gerr) != fmt.Sprint(werr) || errors.Is(gerr, fs.ErrNotExist) != errors.Is(werr, fs.ErrNotExist) {
				t.Errorf("ReadDir: %v %v, the disk's %v %v", names(got), gerr, names(want), werr)
			}
			b, gerr := l.ReadFile(name)
			wb, werr := fs.ReadFile(disk, name)
			if string(b) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) || errors.Is(gerr, fs.ErrNotExist) != errors.Is(werr, fs.ErrNotExist) {
				t.Errorf("ReadFile: %q %v, the disk's %q %v", b, gerr, wb, werr)
			}
		})
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents/a/skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReadDir("agents/a/skills"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a directory made after the scan was listed before forget: %v", err)
	}
	l.forget()
	if _, err := l.ReadDir("agents/a/skills"); err != nil {
		t.Errorf("after forget: %v", err)
	}
}
