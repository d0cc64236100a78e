//go:build linux

package workspace

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenFast: regular files and directories open the short way, and
// read, stat and list as os.File would; a root reached through a link, a
// link inside the tree and a missing file take Open's checks.
func TestOpenFast(t *testing.T) {
	root := t.TempDir()
	write(t, root, "SOUL.md", "calm\n")
	write(t, root, "memory/2026-11-20.md", "- note\n")
	if err := os.Chmod(filepath.Join(root, "SOUL.md"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("SOUL.md", filepath.Join(root, "USER.md")); err != nil {
		t.Fatal(err)
	}
	d := DirFS(root)
	if f, ok := d.openFast("SOUL.md"); ok {
		f.Close()
	} else if !d.noFast.Load() {
		t.Fatal("SOUL.md did not open the short way")
	}
	if d.noFast.Load() {
		t.Skip("no openat2 here")
	}
	f, err := d.Open("SOUL.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*rawFile); !ok {
		t.Errorf("Open(SOUL.md) is a %T, want *rawFile", f)
	}
	got, _ := f.Stat()
	want, err := os.Lstat(filepath.Join(root, "SOUL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() || !got.ModTime().Equal(want.ModTime()) || got.IsDir() {
		t.Errorf("Stat = %s %d %v %v, want %s %d %v %v", got.Name(), got.Size(), got.Mode(), got.ModTime(), want.Name(), want.Size(), want.Mode(), want.ModTime())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if _, err := f.Read(make([]byte, 4)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if es, err := d.ReadDir("memory"); err != nil || len(es) != 1 || es[0].Name() != "2026-11-20.md" {
		t.Errorf("ReadDir(memory) = %v, %v", es, err)
	}
	dir, err := d.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := dir.(*rawDir); !ok {
		t.Errorf("Open(.) is a %T, want *rawDir", dir)
	}
	types := map[string]fs.FileMode{}
	for {
		es, err := dir.(fs.ReadDirFile).ReadDir(1)
		if err == io.EOF {
			break
		}
		if err != nil || len(es) != 1 {
			t.Fatalf("ReadDir(1) = %v, %v", es, err)
		}
		types[es[0].Name()] = es[0].Type()
	}
	dir.Close()
	if want := map[string]fs.FileMode{"SOUL.md": 0, "USER.md": fs.ModeSymlink, "memory": fs.ModeDir}; !maps.Equal(types, want) {
		t.Errorf("entries %v, want %v", types, want)
	}
	if err := os.Symlink("memory", filepath.Join(root, "notes")); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.readDirFast("notes"); ok {
		t.Error("a link to a directory was listed the short way")
	}
	if _, err := d.ReadDir("notes"); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadDir(notes) = %v, want ErrSymlink", err)
	}
	if _, err := d.ReadDir("SOUL.md"); err == nil {
		t.Error("ReadDir(SOUL.md) listed a file")
	}
	if st, err := fs.Stat(d, "memory"); err != nil || !st.IsDir() {
		t.Errorf("Stat(memory) = %v, %v", st, err)
	}
	for _, name := range []string{"USER.md", "missing.md", "memory/missing.md"} {
		if f, ok := d.openFast(name); ok {
			f.Close()
			t.Errorf("%s opened the short way", name)
		}
	}
	if _, err := fs.ReadFile(d, "USER.md"); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadFile(USER.md) = %v, want ErrSymlink", err)
	}

	// A root reached through a link is the user's choice: it reads.
	linked := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(root, linked); err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(DirFS(linked), "SOUL.md"); err != nil || string(b) != "calm\n" {
		t.Errorf("through a linked root: %q, %v", b, err)
	}
}
