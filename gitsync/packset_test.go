package gitsync

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestCommitPackReadWithoutListing: the pack of each commit this process
// writes, and of each small push it receives, is read from then on
// without listing the pack directory again, also once its objects have
// left the object cache.
func TestCommitPackReadWithoutListing(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 1)
	if _, err := readAll(r); err != nil { // the pack directory is listed
		t.Fatal(err)
	}
	r.mu.Lock()
	lists := r.st.disk.lists
	r.mu.Unlock()

	commitPacks(t, r, "b", 3)
	git(t, src, "commit", "-q", "--allow-empty", "-m", "pushed")
	git(t, src, "push", "-q", url+"/ws.git", "main:refs/heads/pushed")
	r.mu.Lock()
	r.st.disk.cache.Clear()
	r.mu.Unlock()
	n, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Snapshot("pushed"); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := r.st.disk.lists - lists; got != 0 {
		t.Errorf("pack directory listed %d times for 3 commits and a push", got)
	}
	if got, want := len(r.st.disk.packs), packFiles(t, dir+"/ws.git"); got != want {
		t.Errorf("%d packs read, %d in the pack directory", got, want)
	}
	if n != 5 {
		t.Errorf("%d files read, want 5", n)
	}
}

// TestPackSetAddsAPackOnce: a pack added again (the same objects
// written twice) is not read twice.
func TestPackSetAddsAPackOnce(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 2)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.st.disk.ready(); err != nil {
		t.Fatal(err)
	}
	n := len(r.st.disk.packs)
	p := r.st.disk.packs[n-1]
	idx, err := os.ReadFile(filepath.Join(r.st.packDir, "pack-"+p.sum.String()+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.st.disk.add(p.sum, idx); err != nil {
		t.Fatal(err)
	}
	if got := len(r.st.disk.packs); got != n {
		t.Errorf("%d packs read after adding one of the %d again", got, n)
	}
}

// TestWrittenBlobsStayInflated: the blobs a commit wrote are read from
// memory after the object cache let them go (here: emptied, with the
// pack file gone), the trees are not kept there.
func TestWrittenBlobsStayInflated(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("met customer 7 about invoice 49\n")
	c, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: object.Signature{Name: "A", Email: "a@agents.invalid"},
		Writes: []FileWrite{{Path: "memory/u1/2026-11-26.md", Content: content}}})
	if err != nil {
		t.Fatal(err)
	}
	tree := gitIn(t, dir, "", "rev-parse", c.String()+":memory")
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs %v (%v), want the commit's", packs, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.disk.cache.Clear()
	if err := r.st.disk.close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(packs[0]); err != nil {
		t.Fatal(err)
	}
	o, err := r.st.disk.get(BlobHash(content))
	if err != nil {
		t.Fatalf("read the blob written: %v", err)
	}
	rd, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if got, _ := io.ReadAll(rd); !bytes.Equal(got, content) {
		t.Errorf("blob read %q, want %q", got, content)
	}
	if _, err := r.st.disk.get(plumbing.NewHash(tree)); err == nil {
		t.Errorf("tree %s read with its pack gone", tree)
	}
}

// TestPackSetFindsWrittenObjectsByName: the objects of the packs this
// process wrote are found by name, not by searching every pack, and are
// forgotten when a roll-up removes their packs.
func TestPackSetFindsWrittenObjectsByName(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "a", 1)
	r.mu.Lock()
	err = r.st.disk.ready() // the pack directory is listed
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "b", 5)
	head := gitIn(t, dir, "", "rev-parse", "main")
	r.mu.Lock()
	placed := len(r.st.disk.where)
	p := r.st.disk.where[plumbing.NewHash(head)]
	r.mu.Unlock()
	if placed != 5*5 || p == nil { // a commit, a blob, three trees each
		t.Fatalf("%d objects placed (the last commit's pack: %v), want 25", placed, p)
	}
	if err := r.RollUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.reindex()
	_, _, err = r.st.disk.find(plumbing.NewHash(head))
	placed = len(r.st.disk.where)
	r.mu.Unlock()
	if err != nil || placed != 0 {
		t.Errorf("after the roll-up: find %v, %d objects placed, want none", err, placed)
	}
}

// TestWrittenBlobsLatestOnly: the blobs written are kept for the latest
// version of each file only, and no more than writtenCacheSize bytes.
func TestWrittenBlobsLatestOnly(t *testing.T) {
	t.Parallel()
	var w writtenBlobs
	blob := func(s string) *plumbing.MemoryObject {
		o := &plumbing.MemoryObject{}
		o.SetType(plumbing.BlobObject)
		o.Write([]byte(s))
		return o
	}
	for i := range 3 {
		w.put("memory/u1.md", blob(strings.Repeat("entry\n", i+1)))
	}
	w.put("memory/u2.md", blob("other\n"))
	if len(w.byHash) != 2 || w.byPath.size != len("entry\n")*3+len("other\n") {
		t.Errorf("%d blobs, %d bytes kept, want the latest of each file", len(w.byHash), w.byPath.size)
	}
	if _, ok := w.get(BlobHash([]byte(strings.Repeat("entry\n", 3)))); !ok {
		t.Error("the latest version not kept")
	}
	big := strings.Repeat("x", writtenCacheSize/2-1)
	for _, p := range []string{"a", "b", "c"} {
		w.put(p+".md", blob(big+p))
	}
	if _, ok := w.get(BlobHash([]byte(big + "a"))); ok || w.byPath.size > writtenCacheSize || len(w.byHash) > 2 {
		t.Errorf("%d bytes in %d blobs kept (a.md's too: %v), more than %d", w.byPath.size, len(w.byHash), ok, writtenCacheSize)
	}
	if _, ok := w.get(BlobHash([]byte(big + "c"))); !ok {
		t.Error("the blob written last not kept")
	}
}
