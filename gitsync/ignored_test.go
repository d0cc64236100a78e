package gitsync

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

// TestIgnored lists what git ignores and does not track, and Without
// hides it.
func TestIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newWorkRepo(t, map[string]string{".gitignore": "*.log\nbuild/\n", "notes.md": "# notes\n"})
	writeFiles(t, dir, map[string]string{"kept.log": "tracked\n", "a.log": "x", "build/out/x.md": "x", "sub/b.log": "x", "sub/c.md": "c"})
	git(t, dir, "add", "-f", "kept.log")

	tests := []struct {
		dir  string
		want []string
	}{
		{dir, []string{"a.log", "build", "sub/b.log"}},
		{filepath.Join(dir, "sub"), []string{"b.log"}},
		{filepath.Join(dir, "build"), nil}, // asked for by name
		{t.TempDir(), nil},                 // not a work tree
	}
	for _, tt := range tests {
		got, err := Ignored(ctx, tt.dir)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Ignored(%s) = %q, %v; want %q", tt.dir, got, err, tt.want)
		}
	}

	ignored, _ := Ignored(ctx, dir)
	w := Without(os.DirFS(dir), ignored)
	if err := fstest.TestFS(w, "notes.md", "kept.log", "sub/c.md"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.log", "build", "build/out/x.md", "sub/b.log"} {
		if _, err := fs.Stat(w, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%s) = %v; want it hidden", name, err)
		}
	}
	es, err := fs.ReadDir(w, "sub")
	if err != nil || len(es) != 1 || es[0].Name() != "c.md" {
		t.Errorf("ReadDir(sub) = %v, %v; want only c.md", es, err)
	}
}
