package gitsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func newBare(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r.git")
	git(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", dir)
	return dir
}

func TestCommit(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	ctx := context.Background()
	steps := []struct {
		writes []FileWrite
		user   string
		want   string // ls-tree -r listing after the step: path=content
	}{
		{[]FileWrite{{Path: "MEMORY.md", Content: []byte("m\n")}, {Path: "memory/2026-01-01.md", Content: []byte("d1\n")}}, "alice", "MEMORY.md=m memory/2026-01-01.md=d1"},
		{[]FileWrite{{Path: "memory/2026-01-02.md", Content: []byte("d2\n")}}, "", "MEMORY.md=m memory/2026-01-01.md=d1 memory/2026-01-02.md=d2"},
		{[]FileWrite{{Path: "memory/2026-01-01.md", Delete: true}, {Path: "memory/2026-01-02.md", Delete: true}, {Path: "users/a/USER.md", Content: []byte("u\n")}}, "bob", "MEMORY.md=m users/a/USER.md=u"},
		{[]FileWrite{{Path: "a.b", Content: []byte("x\n")}, {Path: "a/b", Content: []byte("y\n")}}, "", "MEMORY.md=m a.b=x a/b=y users/a/USER.md=u"},
	}
	var prev plumbing.Hash
	for i, st := range steps {
		h, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: st.writes, Author: agent, User: st.user, Message: fmt.Sprintf("step %d", i)})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		// git itself checks the objects we wrote.
		git(t, dir, "fsck", "--strict", "--no-dangling")
		var got []string
		for _, line := range strings.Split(git(t, dir, "ls-tree", "-r", "--name-only", h.String()), "\n") {
			got = append(got, line+"="+strings.TrimSpace(git(t, dir, "cat-file", "-p", h.String()+":"+line)))
		}
		if strings.Join(got, " ") != st.want {
			t.Errorf("step %d: tree = %s, want %s", i, strings.Join(got, " "), st.want)
		}
		if parent := git(t, dir, "rev-list", "--parents", "-n1", h.String()); !prev.IsZero() && !strings.HasSuffix(parent, prev.String()) {
			t.Errorf("step %d: parents %s, want %s", i, parent, prev)
		}
		msg := git(t, dir, "log", "-1", "--format=%an <%ae>|%(trailers:key=Quire-User,valueonly)", h.String())
		want := "Ada <ada@agents.invalid>|" + st.user
		if strings.TrimSpace(msg) != want {
			t.Errorf("step %d: log = %q, want %q", i, msg, want)
		}
		prev = h
	}
	// Compare-and-swap: a stale Expect is refused and nothing moves.
	_, err = r.Commit(ctx, CommitRequest{Ref: "main", Expect: plumbing.NewHash(strings.Repeat("1", 40)), Writes: steps[0].writes, Author: agent})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("stale commit error = %v, want ErrStale", err)
	}
	if got := git(t, dir, "rev-parse", "main"); got != prev.String() {
		t.Fatalf("main moved to %s after a stale commit", got)
	}
	if _, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: []FileWrite{{Path: "../x", Content: nil}}, Author: agent}); err == nil {
		t.Fatal("commit to ../x succeeded")
	}
	if _, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: []FileWrite{{Path: ".git/config", Content: nil}}, Author: agent}); err == nil {
		t.Fatal("commit to .git/config succeeded")
	}
}

func TestCommitConcurrentAndRepack(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Writes: []FileWrite{{Path: fmt.Sprintf("memory/%02d.md", i), Content: []byte("x\n")}}, Author: agent})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := git(t, dir, "rev-list", "--count", "main"); n != "20" {
		t.Fatalf("history has %s commits, want 20", n)
	}
	// Every commit is one pack, never loose objects.
	loose, err := r.LooseObjects()
	if err != nil || loose != 0 {
		t.Fatalf("LooseObjects = %d, %v; want 0", loose, err)
	}
	if n := packFiles(t, dir); n != 20 {
		t.Fatalf("%d packs after 20 commits", n)
	}
	if err := r.Repack(); err != nil {
		t.Fatal(err)
	}
	if n := packFiles(t, dir); n != 1 {
		t.Errorf("%d packs after repack, want 1", n)
	}
	git(t, dir, "fsck", "--strict")
	s, err := r.Snapshot("main")
	if err != nil {
		t.Fatal(err)
	}
	es, err := s.ReadDir("memory")
	if err != nil || len(es) != 20 {
		t.Fatalf("ReadDir(memory) after repack: %d entries, %v", len(es), err)
	}
}

func BenchmarkCommit(b *testing.B) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("memory/d%02d/%03d.md", i%10, i)] = "x\n"
	}
	dir := newWorkRepo(b, files)
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	i := 0
	for b.Loop() {
		i++
		_, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Writes: []FileWrite{{Path: "memory/d03/new.md", Content: fmt.Appendf(nil, "%d\n", i)}}, Author: agent})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func TestCommitMatchAndStart(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	ctx := context.Background()
	main, err := r.Commit(ctx, CommitRequest{Ref: "main", Author: agent, Writes: []FileWrite{{Path: "users/u/USER.md", Content: []byte("v1\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.SnapshotOf(main)
	if err != nil {
		t.Fatal(err)
	}
	etag, err := s.Hash("users/u/USER.md")
	if err != nil || etag != BlobHash([]byte("v1\n")) {
		t.Fatalf("Hash = %s, %v; want BlobHash of the content %s", etag, err, BlobHash([]byte("v1\n")))
	}
	zero := plumbing.ZeroHash
	stale := BlobHash([]byte("v0\n"))
	tests := []struct {
		name     string
		path     string
		match    *plumbing.Hash
		conflict bool
	}{
		{"matching etag", "users/u/USER.md", &etag, false},
		{"stale etag", "users/u/USER.md", &etag, true}, // etag is now old
		{"another stale etag", "users/u/USER.md", &stale, true},
		{"create if absent", "users/u/BOOTSTRAP.md", &zero, false},
		{"create but exists", "users/u/BOOTSTRAP.md", &zero, true},
		{"etag of a missing file", "users/v/USER.md", &etag, true},
		{"no match given", "users/u/USER.md", nil, false},
	}
	for _, tt := range tests {
		before := git(t, dir, "rev-parse", "main")
		_, err := r.Commit(ctx, CommitRequest{Ref: "main", Author: agent, Writes: []FileWrite{{Path: tt.path, Content: []byte(tt.name), Match: tt.match}}})
		var ce *ConflictError
		if tt.conflict {
			if !errors.As(err, &ce) || !errors.Is(err, ErrStale) || ce.Path != tt.path {
				t.Errorf("%s: error %v, want a conflict on %s", tt.name, err, tt.path)
			}
			if git(t, dir, "rev-parse", "main") != before {
				t.Errorf("%s: main moved on a conflict", tt.name)
			}
		} else if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}

	// A proposal branch starts from main.
	head := git(t, dir, "rev-parse", "main")
	p, err := r.Commit(ctx, CommitRequest{Ref: "refs/heads/proposals/ada/1", Start: "main", Author: agent, Writes: []FileWrite{{Path: "SOUL.md", Content: []byte("new soul\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if parent := git(t, dir, "rev-parse", p.String()+"^"); parent != head {
		t.Fatalf("proposal parent = %s, want main %s", parent, head)
	}
	if got := git(t, dir, "rev-parse", "main"); got != head {
		t.Fatal("a proposal commit moved main")
	}
	if files := git(t, dir, "ls-tree", "-r", "--name-only", p.String()); !strings.Contains(files, "users/u/USER.md") || !strings.Contains(files, "SOUL.md") {
		t.Fatalf("proposal tree: %s", files)
	}
}

// Create starts a branch only if it does not exist: two proposals that
// picked the same number never end up on one branch.
func TestCommitCreate(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	base, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: []FileWrite{{Path: "SOUL.md", Content: []byte("s\n")}}, Author: agent})
	if err != nil {
		t.Fatal(err)
	}
	req := CommitRequest{Ref: "proposals/ada/1", Start: base.String(), Create: true, Author: agent,
		Writes: []FileWrite{{Path: "SOUL.md", Content: []byte("s2\n")}}}
	h, err := r.Commit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if parent := strings.Fields(git(t, dir, "rev-list", "--parents", "-n1", h.String())); len(parent) != 2 || parent[1] != base.String() {
		t.Fatalf("the new branch must start at main: %v", parent)
	}
	req.Writes = []FileWrite{{Path: "SOUL.md", Content: []byte("s3\n")}}
	if _, err := r.Commit(ctx, req); !errors.Is(err, ErrStale) {
		t.Fatalf("a second Create of the same branch: %v, want ErrStale", err)
	}
	if got := strings.TrimSpace(git(t, dir, "rev-parse", "proposals/ada/1")); got != h.String() {
		t.Fatalf("the refused commit moved the branch to %s", got)
	}
	names, err := r.RefNames("refs/heads/proposals/")
	if err != nil || len(names) != 1 || names[0] != "refs/heads/proposals/ada/1" {
		t.Fatalf("RefNames = %v, %v", names, err)
	}
}
