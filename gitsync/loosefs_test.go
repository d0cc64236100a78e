package gitsync

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestGoGitListsNoPack: go-git's storage finds no pack in the pack
// directory (it would load every index as a MemoryIndex), and objects
// in packs still read, through the packSet.
func TestGoGitListsNoPack(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"a.md": "b\n"})
	git(t, dir, "gc", "-q")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("HEAD"); err != nil {
		t.Fatalf("objects in a pack: %v", err)
	}
	if packs, err := r.st.Storage.ObjectPacks(); err != nil || len(packs) != 0 {
		t.Errorf("go-git lists packs %v, %v", packs, err)
	}
	if len(r.st.disk.packs) != 1 {
		t.Errorf("the packSet reads %d packs, not 1", len(r.st.disk.packs))
	}
}

// commitPacks commits n files to main of r, one pack each.
func commitPacks(t testing.TB, r *Repository, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: object.Signature{Name: "A", Email: "a@agents.invalid"},
			Message: "append", Writes: []FileWrite{{Path: fmt.Sprintf("%s/%d/%d.md", prefix, i%7, i), Content: []byte(randomText(300))}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll reads every file of main through r, as the daemon's requests
// do.
func readAll(r *Repository) (int, error) {
	s, err := r.Snapshot("main")
	if err != nil {
		return 0, err
	}
	n := 0
	err = fs.WalkDir(s, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		_, err = s.ReadFile(p)
		return err
	})
	return n, err
}

// TestPackWithoutIndexIsNotListed: a pack whose index is not there yet
// (being installed, or left so by a crash between the two renames) is
// not read, and every read goes on; go-git listed it, failed to load
// its index, and every read failed with "packfile not found".
func TestPackWithoutIndexIsNotListed(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "m", 3)
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(dir, "objects", "pack", "pack-0123456789abcdef0123456789abcdef01234567.pack")
	if err := os.WriteFile(orphan, b, 0o444); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := readAll(r2); err != nil || n != 3 {
		t.Fatalf("reads next to a pack without index: %d files, %v", n, err)
	}
	if slices.ContainsFunc(r2.st.disk.packs, func(p *diskPack) bool { return strings.Contains(orphan, p.sum.String()) }) {
		t.Fatalf("the pack without index is read")
	}
}
