package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDirServesRegularFiles(t *testing.T) {
	root := t.TempDir()
	write(t, root, "SOUL.md", "calm\n")
	write(t, root, "memory/2026-11-20.md", "- note\n")
	write(t, root, "skills/pdf/SKILL.md", "---\nname: pdf\n---\n")
	d := DirFS(root)
	if err := fstest.TestFS(d, "SOUL.md", "memory/2026-11-20.md", "skills/pdf/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(d, "skills")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "pdf/SKILL.md"); err != nil {
		t.Fatal(err)
	}
}

// TestDirRefuses: links (out of the tree, inside it, on the way to a file),
// FIFOs and links to devices are errors, at once: nothing hangs and
// nothing outside the tree is read.
func TestDirRefuses(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "secret", "root:x:0:0\n")
	write(t, root, "AGENTS.md", "rules\n")
	write(t, root, "real/SKILL.md", "x\n")
	links := map[string]string{
		"SOUL.md":        filepath.Join(outside, "secret"),
		"USER.md":        "AGENTS.md",
		"skills":         "real",
		"TOOLS.md":       "/dev/zero",
		"escape":         outside,
		"memory/loop.md": "loop.md",
	}
	if err := os.MkdirAll(filepath.Join(root, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	fifo := makeFIFO(t, filepath.Join(root, "HEARTBEAT.md"))
	d := DirFS(root)
	for _, tc := range []struct {
		name string
		want error
	}{
		{"SOUL.md", ErrSymlink},
		{"USER.md", ErrSymlink},
		{"skills/SKILL.md", ErrSymlink},
		{"TOOLS.md", ErrSymlink},
		{"escape/secret", ErrSymlink},
		{"memory/loop.md", ErrSymlink},
		{"HEARTBEAT.md", ErrNotRegular},
		{"../outside", fs.ErrInvalid},
		{"/etc/passwd", fs.ErrInvalid},
	} {
		if tc.name == "HEARTBEAT.md" && !fifo {
			continue
		}
		done := make(chan error, 1)
		go func() {
			_, err := fs.ReadFile(d, tc.name)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, tc.want) {
				t.Errorf("ReadFile(%q) = %v, want %v", tc.name, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%q) hangs", tc.name)
		}
		if _, err := d.Stat(tc.name); !errors.Is(err, tc.want) {
			t.Errorf("Stat(%q) = %v, want %v", tc.name, err, tc.want)
		}
	}
	// A link is listed as a link, so walkers can skip it and say why.
	es, err := d.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Name() == "SOUL.md" && e.Type()&fs.ModeSymlink == 0 {
			t.Errorf("SOUL.md listed as %v, want a link", e.Type())
		}
	}
	if _, err := fs.Sub(d, "escape"); !errors.Is(err, ErrSymlink) {
		t.Errorf("Sub(escape) = %v, want ErrSymlink", err)
	}
	if b, err := fs.ReadFile(d, "AGENTS.md"); err != nil || string(b) != "rules\n" {
		t.Errorf("AGENTS.md = %q, %v", b, err)
	}
}

// FuzzDirNames: any name either reads a file of the tree or fails; none
// reads the file outside it.
func FuzzDirNames(f *testing.F) {
	for _, s := range []string{"SOUL.md", "../secret", "a/../../secret", "link/secret", "link", "./SOUL.md", "", "/", "fifo"} {
		f.Add(s)
	}
	root := f.TempDir()
	outside := f.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "SOUL.md"), []byte("soul"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		f.Fatal(err)
	}
	makeFIFO(f, filepath.Join(root, "fifo"))
	d := DirFS(root)
	f.Fuzz(func(t *testing.T, name string) {
		b, err := fs.ReadFile(d, name)
		if err == nil && string(b) == "SECRET" {
			t.Fatalf("ReadFile(%q) read outside the workspace", name)
		}
	})
}
