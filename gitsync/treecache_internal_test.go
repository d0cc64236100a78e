package gitsync

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The tree cache holds at most treeCacheEntries tree entries, however
// many versions of a large tree are put in it.
func TestTreeCacheBoundedBySize(t *testing.T) {
	var c treeCache
	big := &treeDir{entries: make([]object.TreeEntry, 1000)}
	for i := range 1000 {
		var h plumbing.Hash
		h[0], h[1] = byte(i), byte(i>>8)
		c.put(h, big)
		if c.entries > treeCacheEntries {
			t.Fatalf("after %d trees the cache holds %d entries, more than %d", i+1, c.entries, treeCacheEntries)
		}
		if _, ok := c.get(h); !ok {
			t.Fatalf("tree %d not found right after it was put", i)
		}
	}
}

// A commit puts the trees it writes in the tree cache, so the next
// commit (and snapshot) does not decode them again; a tree with a
// submodule, which the cache holds without it, is decoded anew, so the
// submodule stays.
func TestCommitCachesItsTrees(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	sub := plumbing.NewHash(strings.Repeat("5", 40))
	writes := []FileWrite{
		{Path: "users/u1/a.md", Content: []byte("a\n")},
		{Path: "users/u2/a.md", Content: []byte("b\n")},
		{Path: "vendor/lib", Mode: filemode.Submodule, Object: sub},
		{Path: "vendor/README", Content: []byte("r\n")},
	}
	if _, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: writes, Author: agent}); err != nil {
		t.Fatal(err)
	}
	users := plumbing.NewHash(git(t, dir, "rev-parse", "main:users"))
	d, ok := r.trees.get(users)
	if !ok || !d.whole || len(d.entries) != 2 {
		t.Fatalf("users/ after a commit: cached %v, %+v; want its 2 entries, whole", ok, d)
	}
	// Tell the cached users/ tree apart from the stored one: a commit
	// that reads it from the cache writes this entry into its users/.
	marker := object.TreeEntry{Name: "u0", Mode: filemode.Regular, Hash: BlobHash([]byte("a\n"))}
	r.trees.put(users, &treeDir{entries: append([]object.TreeEntry{marker}, d.entries...), whole: true})
	h, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: []FileWrite{{Path: "users/u3/a.md", Content: []byte("c\n")}, {Path: "vendor/NEWS", Content: []byte("n\n")}}, Author: agent})
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "ls-tree", "--name-only", h.String()+":users"); got != "u0\nu1\nu2\nu3" {
		t.Errorf("users/ = %q: the commit did not read users/ from the tree cache", got)
	}
	if got := git(t, dir, "ls-tree", h.String()+":vendor"); !strings.Contains(got, "160000 commit "+sub.String()+"\tlib") {
		t.Errorf("vendor/ = %q: the submodule is lost", got)
	}
}

// TestWrittenTreesKeptByPath: the trees a commit wrote are read by path
// after the tree cache let them go, the latest version of each
// directory only.
func TestWrittenTreesKeptByPath(t *testing.T) {
	t.Parallel()
	r, err := Open(newBare(t))
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "memory", 8)
	r.trees.mu.Lock()
	r.trees.m, r.trees.entries = nil, 0 // as when it fills up
	dirs := len(r.trees.latest.m)
	r.trees.mu.Unlock()
	if dirs != 9 { // the root, memory and memory/0 to memory/6
		t.Errorf("%d directories kept by path, want 9", dirs)
	}
	s, err := r.Snapshot("main")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"memory/0/0.md", "memory/0/7.md", "memory/6/6.md"} {
		if _, err := fs.ReadFile(s, name); err != nil {
			t.Fatal(err)
		}
	}
	r.trees.mu.Lock()
	defer r.trees.mu.Unlock()
	if n := len(r.trees.m); n != 0 {
		t.Errorf("%d trees read from the packs again", n)
	}
}
