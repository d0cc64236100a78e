package gitsync

import (
	"path/filepath"
	"testing"
)

// TestIdxFSReadsWhole: a pack index opened through a repository's file
// system is read into memory (one read, not one per fan-out entry), and
// reads the same as the file.
func TestIdxFSReadsWhole(t *testing.T) {
	dir := newWorkRepo(t, map[string]string{"a.md": "b\n"})
	git(t, dir, "gc", "-q")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("pack indexes: %v", idx)
	}
	rel, _ := filepath.Rel(filepath.Join(dir, ".git"), idx[0])
	f, err := r.st.Storage.Filesystem().Open(rel)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(*idxFile); !ok {
		t.Fatalf("a pack index opens as %T, not read whole", f)
	}
	if _, err := r.Resolve("HEAD"); err != nil {
		t.Fatalf("objects through the read-whole index: %v", err)
	}
}
