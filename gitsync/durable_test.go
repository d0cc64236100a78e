package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestPushChecksEveryCommit: a push whose first commit adds a 5 MB file
// (or a symbolic link) and whose second removes it is refused, and the
// file is not stored.
func TestPushChecksEveryCommit(t *testing.T) {
	t.Parallel()
	_, url, dir := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	base := git(t, src, "rev-parse", "HEAD")
	commitFiles(t, src, map[string]string{"blob.bin": randomText(5 << 20)}, "add")
	blob := git(t, src, "rev-parse", "HEAD:blob.bin")
	git(t, src, "rm", "-q", "blob.bin")
	git(t, src, "commit", "-q", "-m", "remove")
	out, err := gitTry(src, "push", url+"/ws.git", "main")
	if err == nil {
		t.Fatalf("a push with a 5 MB file in an earlier commit was accepted:\n%s", out)
	}
	if !strings.Contains(out, "blob.bin") || !strings.Contains(out, "earlier commit") {
		t.Errorf("the refusal does not name the file and commit:\n%s", out)
	}
	bare := filepath.Join(dir, "ws.git")
	if got := git(t, bare, "rev-parse", "main"); got != base {
		t.Fatalf("main moved to %s", got)
	}
	if _, err := gitTry(bare, "cat-file", "-e", blob); err == nil {
		t.Fatal("the refused blob is stored")
	}
	if ms, _ := filepath.Glob(filepath.Join(bare, quarantinePrefix+"*")); len(ms) != 0 {
		t.Fatalf("quarantine left: %v", ms)
	}
}

// TestPushManyRefs: 3,000 refs in one push; the status report is far
// over one side-band packet and the client must read it.
func TestPushManyRefs(t *testing.T) {
	t.Parallel()
	_, url, dir := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	var b strings.Builder
	head := git(t, src, "rev-parse", "HEAD")
	for i := range 3000 {
		fmt.Fprintf(&b, "create refs/heads/feature/branch-with-a-longish-name-%04d %s\n", i, head)
	}
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir = src
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-ref: %v\n%s", err, out)
	}
	if out, err := gitTry(src, "push", "-q", url+"/ws.git", "refs/heads/*:refs/heads/*"); err != nil {
		t.Fatalf("push of 3,001 refs: %v\n%s", err, out)
	}
	if n := len(strings.Fields(git(t, filepath.Join(dir, "ws.git"), "for-each-ref", "--format=%(refname)"))); n != 3001 {
		t.Fatalf("%d refs on the server, want 3001", n)
	}
	// A branch at a commit the server has: an empty pack.
	git(t, src, "branch", "again")
	git(t, src, "push", "-q", url+"/ws.git", "again")
	if got := git(t, filepath.Join(dir, "ws.git"), "rev-parse", "again"); got != head {
		t.Fatalf("again = %s, want %s", got, head)
	}
}

// TestBrokenRefIsReported: an empty ref file (what in-place ref updates
// left after a crash) is an error naming the ref, never an empty
// repository; a push can replace it.
func TestBrokenRefIsReported(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	bare := filepath.Join(dir, "ws.git")
	if err := os.WriteFile(filepath.Join(bare, "refs", "heads", "main"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(bare)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Check()
	var br *BrokenRefError
	if !errors.As(err, &br) || br.Name != "refs/heads/main" {
		t.Fatalf("Check = %v, want a BrokenRefError for refs/heads/main", err)
	}
	if _, err := r.Resolve("refs/heads/main"); !errors.Is(err, ErrBrokenRef) {
		t.Fatalf("Resolve = %v, want ErrBrokenRef", err)
	}
	if _, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: object.Signature{Name: "A"},
		Writes: []FileWrite{{Path: "x.md", Content: []byte("x")}}}); !errors.Is(err, ErrBrokenRef) {
		t.Fatalf("Commit on a broken ref = %v", err)
	}
	// The owner pushes a fix.
	hr, _ := h.Repository("ws")
	git(t, src, "push", "-q", url+"/ws.git", "main")
	if got, want := git(t, bare, "rev-parse", "main"), git(t, src, "rev-parse", "HEAD"); got != want {
		t.Fatalf("main = %s after the fixing push, want %s", got, want)
	}
	if err := hr.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestRefStore: updates are compare-and-swap under git's lock file (a
// lock held by git makes a writer wait, then fail), deletion removes a
// packed ref, and nothing is written in place.
func TestRefStore(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c1, err := r.Commit(ctx, CommitRequest{Ref: "main", Author: object.Signature{Name: "A"}, Writes: []FileWrite{{Path: "a.md", Content: []byte("a")}}})
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "branch", "packed", c1.String())
	git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, "refs", "heads", "packed")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("pack-refs left a loose ref: %v", err)
	}
	r.mu.Lock()
	err = r.setRef("refs/heads/packed", plumbing.ZeroHash, c1)
	r.mu.Unlock()
	if !errors.Is(err, ErrStale) {
		t.Fatalf("create over a packed ref = %v, want ErrStale", err)
	}
	r.mu.Lock()
	err = r.setRef("refs/heads/packed", c1, plumbing.ZeroHash)
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitTry(dir, "rev-parse", "--verify", "-q", "refs/heads/packed"); err == nil {
		t.Fatal("the packed ref survived its deletion")
	}
	if got := git(t, dir, "rev-parse", "main"); got != c1.String() {
		t.Fatalf("main = %s", got)
	}
	// A fresh lock (a git process updating main) makes the commit wait
	// and fail; the ref is untouched. Its time is ahead, so that it
	// stays fresh for the whole wait.
	lock := filepath.Join(dir, "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(time.Hour)
	if err := os.Chtimes(lock, ahead, ahead); err != nil {
		t.Fatal(err)
	}
	_, err = r.Commit(ctx, CommitRequest{Ref: "main", Author: object.Signature{Name: "A"}, Writes: []FileWrite{{Path: "b.md", Content: []byte("b")}}})
	if err == nil || !strings.Contains(err.Error(), "main.lock") {
		t.Fatalf("commit while git holds main.lock = %v", err)
	}
	os.Remove(lock)
	if got := git(t, dir, "rev-parse", "main"); got != c1.String() {
		t.Fatalf("main = %s after a failed commit", got)
	}
	// A stale lock (a crash) is taken over.
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-3 * time.Second)
	os.Chtimes(lock, old, old)
	if _, err := r.Commit(ctx, CommitRequest{Ref: "main", Author: object.Signature{Name: "A"}, Writes: []FileWrite{{Path: "b.md", Content: []byte("b")}}}); err != nil {
		t.Fatalf("commit over a stale lock: %v", err)
	}
	git(t, dir, "fsck", "--strict")
}

// TestHostCreateOptIn: a push to a new name is refused unless
// AllowCreate; created repositories are private to their owner.
func TestHostCreateOptIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, err := NewHost(dir, HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	url := srv.URL
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	if out, err := gitTry(src, "push", url+"/new.git", "main"); err == nil {
		t.Fatalf("a push created a repository without AllowCreate:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.git")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("new.git exists: %v", err)
	}
	if _, err := h.Create("made"); err != nil {
		t.Fatal(err)
	}
	git(t, src, "push", "-q", url+"/made.git", "main")
	err = filepath.WalkDir(filepath.Join(dir, "made.git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o077 != 0 && (d.IsDir() || !strings.Contains(p, "objects")) {
			// Top-level files and every directory are private; git
			// writes its own pack files 0444 inside private
			// directories.
			if d.IsDir() || filepath.Dir(p) == filepath.Join(dir, "made.git") {
				return fmt.Errorf("%s is %v", p, st.Mode().Perm())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "made.git")); st.Mode().Perm() != 0o700 {
		t.Fatalf("made.git is %v, want 0700", st.Mode().Perm())
	}
}

// TestWriteThroughFile: a write whose parent is a file, or a file where a
// directory is, is a PathConflictError and nothing moves.
func TestWriteThroughFile(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := object.Signature{Name: "A"}
	c1, err := r.Commit(ctx, CommitRequest{Ref: "main", Author: a, Writes: []FileWrite{{Path: "memory/2026-01-01.md", Content: []byte("# log\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"memory/2026-01-01.md/sub.md", "memory/2026-01-01.md/a/b.md", "memory"} {
		_, err := r.Commit(ctx, CommitRequest{Ref: "main", Author: a, Writes: []FileWrite{{Path: p, Content: []byte("x")}}})
		var pc *PathConflictError
		if !errors.As(err, &pc) {
			t.Errorf("write %s = %v, want a PathConflictError", p, err)
		}
	}
	if got := git(t, dir, "rev-parse", "main"); got != c1.String() {
		t.Fatalf("main moved to %s", got)
	}
	if got := git(t, dir, "show", "main:memory/2026-01-01.md"); got != "# log" {
		t.Fatalf("the log is %q", got)
	}
}

func TestLimitReader(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		size, limit int
		tooLarge    bool
	}{{10, 10, false}, {11, 10, true}, {0, 0, false}, {1, 0, true}, {100000, 99999, true}, {5, 100, false}} {
		got, err := io.ReadAll(&limitReader{r: bytes.NewReader(make([]byte, tt.size)), n: int64(tt.limit)})
		if tt.tooLarge != errors.Is(err, errTooLarge) || (!tt.tooLarge && (err != nil || len(got) != tt.size)) || len(got) > tt.limit {
			t.Errorf("size %d limit %d: %d bytes, %v", tt.size, tt.limit, len(got), err)
		}
	}
}

// TestPushSlotsAndRecord: a push over MaxConcurrentPushes waits, then
// gets a clear 503; every push's outcome is kept for status, and the
// client is told which commit a ref is at.
func TestPushSlotsAndRecord(t *testing.T) {
	t.Parallel()
	h, url, _ := testHost(t, HostOptions{MaxConcurrentPushes: 1})
	h.pushWait = 100 * time.Millisecond
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	out := git(t, src, "push", url+"/ws.git", "main")
	head := git(t, src, "rev-parse", "HEAD")
	if !strings.Contains(out, "refs/heads/main is at "+head) {
		t.Errorf("the push output does not name the commit:\n%s", out)
	}
	recs := h.LastPushes()
	if len(recs) != 1 || recs[0].Repo != "ws" || recs[0].Result != "ok" || len(recs[0].Refs) != 1 || recs[0].Refs[0].New != head {
		t.Fatalf("LastPushes = %+v", recs)
	}

	h.pushes <- struct{}{} // another push holds the only slot
	commitFiles(t, src, map[string]string{"memory/a.md": "a\n"}, "more")
	out, err := gitTry(src, "push", url+"/ws.git", "main")
	<-h.pushes
	if err == nil || !strings.Contains(out, "503") {
		t.Fatalf("a push over the bound: %v\n%s", err, out)
	}
	git(t, src, "push", "-q", url+"/ws.git", "main")

	commitFiles(t, src, map[string]string{"link.md": "x"}, "bad")
	git(t, src, "rm", "-q", "link.md")
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link.md")); err != nil {
		t.Fatal(err)
	}
	git(t, src, "add", "-A")
	git(t, src, "commit", "-q", "-m", "symlink")
	if _, err := gitTry(src, "push", url+"/ws.git", "main"); err == nil {
		t.Fatal("a symbolic link was accepted")
	}
	recs = h.LastPushes()
	if len(recs) != 1 || recs[0].Result != "refused" || !strings.Contains(recs[0].Refs[0].Result, "symbolic link") {
		t.Fatalf("LastPushes after a refusal = %+v", recs)
	}
}
