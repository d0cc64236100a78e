//go:build linux

package workspace

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"syscall"
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
	if _, ok, _ := d.readDirFast("notes"); ok {
		t.Error("a link to a directory was listed the short way")
	}
	if _, err := d.ReadDir("notes"); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadDir(notes) = %v, want ErrSymlink", err)
	}
	if _, err := d.ReadDir("SOUL.md"); err == nil {
		t.Error("ReadDir(SOUL.md) listed a file")
	}
	for _, name := range []string{"missing", "memory/missing", "missing/deeper"} {
		_, ok, err := d.readDirFast(name)
		_, slow := d.Open(name) // the checks' answer
		if !ok || !errors.Is(err, fs.ErrNotExist) || !errors.Is(slow, fs.ErrNotExist) {
			t.Errorf("readDirFast(%s) = %v, %v; Open: %v", name, ok, err, slow)
		}
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

// TestOpenListed: a file its listing showed as regular opens without an
// lstat; another Dir's or package's entry, and a file swapped for a FIFO
// since the listing, take Open's checks.
func TestOpenListed(t *testing.T) {
	root := t.TempDir()
	write(t, root, "SOUL.md", "calm\n")
	write(t, root, "HEARTBEAT.md", "beat\n")
	d := DirFS(root)
	es, err := d.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	entry := map[string]fs.DirEntry{}
	for _, e := range es {
		entry[e.Name()] = e
	}
	f, err := d.OpenListed("SOUL.md", entry["SOUL.md"])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*rawFile); !ok && !d.noFast.Load() {
		t.Errorf("OpenListed(SOUL.md) is a %T, want *rawFile", f)
	}
	f.Close()
	if f, ok := d.openListed("SOUL.md", entry["HEARTBEAT.md"]); ok {
		f.Close()
		t.Error("another file's entry opened SOUL.md the short way")
	}
	osEntries, _ := os.ReadDir(root)
	if f, ok := d.openListed(osEntries[0].Name(), osEntries[0]); ok {
		f.Close()
		t.Error("an os.DirEntry opened the short way")
	}
	if err := os.Remove(filepath.Join(root, "HEARTBEAT.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "HEARTBEAT.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.OpenListed("HEARTBEAT.md", entry["HEARTBEAT.md"]); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenListed(swapped for a FIFO) = %v, want ErrNotRegular", err)
	}
	if _, err := d.OpenListed("../x", entry["SOUL.md"]); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("OpenListed(../x) = %v, want ErrInvalid", err)
	}
}

// TestReadListed: a file its listing showed as regular is read whole in
// one call; another file's entry, a file over the limit, an empty one, and
// files swapped since the listing for a FIFO or a link are not read (the
// caller opens them, and Open's checks decide).
func TestReadListed(t *testing.T) {
	root := t.TempDir()
	write(t, root, "SOUL.md", "calm\n")
	write(t, root, "HEARTBEAT.md", "beat\n")
	write(t, root, "EMPTY.md", "")
	write(t, root, "LINKED.md", "was a file\n")
	write(t, root, "sub/USER.md", "ana\n")
	d := DirFS(root)
	entries := func(dir string) map[string]fs.DirEntry {
		es, err := d.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]fs.DirEntry{}
		for _, e := range es {
			m[e.Name()] = e
		}
		return m
	}
	entry, sub := entries("."), entries("sub")
	if d.noFast.Load() {
		t.Skip("no openat2 here")
	}
	if data, ok := d.ReadListed("SOUL.md", entry["SOUL.md"], 1<<20); !ok || string(data) != "calm\n" {
		t.Errorf("ReadListed(SOUL.md) = %q, %v", data, ok)
	}
	if data, ok := d.ReadListed("sub/USER.md", sub["USER.md"], 1<<20); !ok || string(data) != "ana\n" {
		t.Errorf("ReadListed(sub/USER.md) = %q, %v", data, ok)
	}
	for _, c := range []struct {
		name  string
		e     fs.DirEntry
		limit int64
	}{
		{"SOUL.md", entry["HEARTBEAT.md"], 1 << 20}, // another file's entry
		{"USER.md", sub["USER.md"], 1 << 20},        // an entry of another directory
		{"SOUL.md", entry["SOUL.md"], 4},            // over the limit
		{"EMPTY.md", entry["EMPTY.md"], 1 << 20},    // empty: the caller reads to the end
		{"sub", entry["sub"], 1 << 20},              // a directory
		{"../SOUL.md", entry["SOUL.md"], 1 << 20},   // not a valid path
	} {
		if data, ok := d.ReadListed(c.name, c.e, c.limit); ok {
			t.Errorf("ReadListed(%s, entry %s, %d) = %q, read", c.name, c.e.Name(), c.limit, data)
		}
	}
	osEntries, _ := os.ReadDir(root)
	for _, e := range osEntries {
		if data, ok := d.ReadListed(e.Name(), e, 1<<20); ok {
			t.Errorf("ReadListed(%s) with an os.DirEntry = %q, read", e.Name(), data)
		}
	}
	if err := os.Remove(filepath.Join(root, "HEARTBEAT.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "HEARTBEAT.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, ok := d.ReadListed("HEARTBEAT.md", entry["HEARTBEAT.md"], 1<<20); ok {
		t.Errorf("ReadListed(swapped for a FIFO) = %q, read", data)
	}
	if err := os.Remove(filepath.Join(root, "LINKED.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("SOUL.md", filepath.Join(root, "LINKED.md")); err != nil {
		t.Fatal(err)
	}
	if data, ok := d.ReadListed("LINKED.md", entry["LINKED.md"], 1<<20); ok {
		t.Errorf("ReadListed(swapped for a link) = %q, read", data)
	}
}
