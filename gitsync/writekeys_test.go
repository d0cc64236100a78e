package gitsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestWriteKeyTrailers: a commit records its writes' keys as trailers git
// itself reads (one block with Quire-User, also after a batch message's
// own trailers), and WriteKeys reads them back exactly, odd characters
// included.
func TestWriteKeyTrailers(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	keys := []WriteKey{
		{ID: "bot::7f1c2a9e-3b4d", Path: "memory/2026-01-01.md"},
		{ID: "bot:alice:order 42 / 100% ~", Path: "users/alice/memory/a note.md"},
	}
	tests := []struct {
		name, msg, user string
		trailers        string // git's view: key: value lines of the last paragraph
	}{
		{"single write", "bot: memory entry", "alice",
			"Quire-User: alice\nQuire-Idempotency-Key: bot::7f1c2a9e-3b4d memory/2026-01-01.md\nQuire-Idempotency-Key: bot:alice:order%2042%20/%20100%25%20~ users/alice/memory/a%20note.md"},
		{"batch", "bot: 2 writes\n\n- a\n- b\n\nQuire-User: alice\nQuire-User: bob\n", "",
			"Quire-User: alice\nQuire-User: bob\nQuire-Idempotency-Key: bot::7f1c2a9e-3b4d memory/2026-01-01.md\nQuire-Idempotency-Key: bot:alice:order%2042%20/%20100%25%20~ users/alice/memory/a%20note.md"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: agentSig, User: tt.user, Message: tt.msg, Keys: keys,
				Writes: []FileWrite{{Path: fmt.Sprintf("f%d.md", i), Content: []byte("x\n")}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := git(t, dir, "log", "-1", "--format=%(trailers:only,unfold)", h.String()); got != tt.trailers {
				t.Errorf("git reads the trailers\n%s\nwant\n%s", got, tt.trailers)
			}
			msg := git(t, dir, "log", "-1", "--format=%B", h.String())
			if got := WriteKeys(msg); !slices.Equal(got, keys) {
				t.Errorf("WriteKeys = %q, want %q", got, keys)
			}
		})
	}
	if got := WriteKeys("subject\n\nQuire-Idempotency-Key: one-field\nQuire-Idempotency-Key: a b c\nQuire-Idempotency-Key: bad%zz p\n"); len(got) != 0 {
		t.Errorf("malformed trailers read as %q", got)
	}
}

// TestRecentWriteKeys: the keys of live's history, newest first: the
// daemon's commits on the first-parent line, a follower's write a host
// merged (under the merge's hash), not a person's commit that forges the
// trailer; the walk ends at stop (also when stop is the write a merge
// brought in) and after limit commits.
func TestRecentWriteKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	keyed := func(parent plumbing.Hash, id string, sig object.Signature) plumbing.Hash {
		t.Helper()
		h, err := r.CommitOn(ctx, parent, CommitRequest{Author: sig, Message: "write " + id, Keys: []WriteKey{{ID: id, Path: id + ".md"}},
			Writes: []FileWrite{{Path: id + ".md", Content: []byte(id + "\n")}}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	person := object.Signature{Name: "Ines", Email: "ines@example.com", When: time.Now()}
	c1 := keyed(plumbing.ZeroHash, "k1", agentSig)
	c2 := keyed(c1, "k2", agentSig)
	w1 := keyed(c2, "w1", agentSig) // another daemon's write, on live first
	forged := keyed(w1, "forged", person)
	side := keyed(c2, "k3", agentSig) // a follower's write on an older live
	merge, err := r.MergeOn(ctx, side, forged)
	if err != nil {
		t.Fatal(err)
	}
	c4 := keyed(merge, "k4", agentSig)
	ids := func(kcs []KeyedCommit) string {
		var b []string
		for _, kc := range kcs {
			for _, k := range kc.Keys {
				name := map[plumbing.Hash]string{c1: "c1", c2: "c2", w1: "w1", merge: "merge", c4: "c4"}[kc.Commit]
				b = append(b, k.ID+"@"+name)
			}
		}
		return strings.Join(b, " ")
	}
	tests := []struct {
		name  string
		stop  plumbing.Hash
		limit int
		want  string
	}{
		{"all", plumbing.ZeroHash, 100, "k4@c4 k3@merge w1@w1 k2@c2 k1@c1"},
		{"to c2", c2, 100, "k4@c4 k3@merge w1@w1"},
		{"to the merge", merge, 100, "k4@c4"},
		// The follower that wrote side has not seen w1, which live took
		// before the merge.
		{"to the merged write", side, 100, "k4@c4 k3@merge w1@w1"},
		{"limit", plumbing.ZeroHash, 2, "k4@c4 k3@merge"},
	}
	for _, tt := range tests {
		got, err := r.RecentWriteKeys(c4, tt.stop, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, ids(got), tt.want)
		}
	}
}

// TestPushDuplicateWrite: two daemons push the same write (one idempotency
// key) on the same older live: the first is merged, the second refused as
// already in live, which a pushing daemon reads as stale (it fetches and
// finds its write there); live holds the write once. Natively and with
// git push.
func TestPushDuplicateWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := map[string]string{"AGENTS.md": "v0\n", "memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n"}
	for _, gitOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("git push %v", gitOnly), func(t *testing.T) {
			h, url, _ := testHost(t, HostOptions{Live: true})
			url += "/ws.git"
			git(t, newWorkRepo(t, files), "push", "-q", url, "main")
			up, err := h.Repository("ws")
			if err != nil {
				t.Fatal(err)
			}
			var mirrors []*Repository
			for range 2 {
				d := t.TempDir()
				git(t, d, "clone", "-q", "--bare", url, ".")
				m, err := Open(d)
				if err != nil {
					t.Fatal(err)
				}
				m.sp.gitOnly.Store(gitOnly)
				mirrors = append(mirrors, m)
			}
			base, err := mirrors[0].Resolve("refs/heads/live")
			if err != nil {
				t.Fatal(err)
			}
			agentWrite(t, up, map[string]string{"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n\n## 10:00\n\nfrom the host\n"})
			key := []WriteKey{{ID: "bot::retry-me", Path: "memory/2026-01-02.md"}}
			var pushed []plumbing.Hash
			for i, m := range mirrors {
				// The same entry, written at another minute by each daemon.
				h, err := m.CommitOn(ctx, base, CommitRequest{Author: agentSig, Message: "append", Keys: key,
					Writes: []FileWrite{{Path: "memory/2026-01-02.md", Content: fmt.Appendf(nil, "# 2026-01-02\n\n## 09:00\n\nfirst\n\n## 11:0%d\n\nONCE\n", i)}}})
				if err != nil {
					t.Fatal(err)
				}
				pushed = append(pushed, h)
			}
			if _, err := mirrors[0].PushCAS(ctx, mustRemote(t, url), LiveRef, base, pushed[0]); err != nil {
				t.Fatalf("first push: %v", err)
			}
			_, err = mirrors[1].PushCAS(ctx, mustRemote(t, url), LiveRef, base, pushed[1])
			var rej *PushRejectedError
			if !errors.As(err, &rej) || !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "already in live: the write with Quire-Idempotency-Key bot::retry-me is there at ") {
				t.Fatalf("the retry's push: %v, want it refused as already in live (stale)", err)
			}
			live, _ := up.Resolve("live")
			snap, err := up.SnapshotOf(live)
			if err != nil {
				t.Fatal(err)
			}
			log, _ := snap.ReadFile("memory/2026-01-02.md")
			if n := strings.Count(string(log), "ONCE"); n != 1 || !strings.Contains(string(log), "from the host") {
				t.Errorf("live's log holds the write %d times:\n%s", n, log)
			}
			// The first daemon's next write goes on its own write (its
			// mirror's live after the merge) and carries the key the
			// second daemon's write brought to live before that merge.
			own, err := mirrors[0].CommitOn(ctx, base, CommitRequest{Author: agentSig, Message: "another", Keys: []WriteKey{{ID: "bot::other", Path: "MEMORY.md"}},
				Writes: []FileWrite{{Path: "MEMORY.md", Content: []byte("# Memory\n")}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mirrors[0].PushCAS(ctx, mustRemote(t, url), LiveRef, base, own); err != nil {
				t.Fatalf("the first daemon's other write: %v", err)
			}
			again, err := mirrors[0].CommitOn(ctx, own, CommitRequest{Author: agentSig, Message: "append again", Keys: key,
				Writes: []FileWrite{{Path: "memory/2026-01-02.md", Content: []byte("# 2026-01-02\n\n## 09:00\n\nfirst\n\n## 11:02\n\nONCE\n")}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mirrors[0].PushCAS(ctx, mustRemote(t, url), LiveRef, own, again); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "already in live") {
				t.Fatalf("a retry pushed on the daemon's own merged write: %v, want it refused as already in live", err)
			}
			git(t, filepath.Dir(up.Path()), "--git-dir="+up.Path(), "fsck", "--no-dangling")
		})
	}
}

// TestQueueLock: the lock goes to its waiters in the order they came; a
// waiter whose context ends leaves the queue without the lock, and the
// lock still reaches the waiters after it. (In a synctest bubble, so
// that a waiter is known to be queued once every goroutine is blocked.)
func TestQueueLock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var l QueueLock
		l.Lock()
		waiting := func(n int) {
			t.Helper()
			synctest.Wait()
			l.mu.Lock()
			defer l.mu.Unlock()
			if len(l.waiters) != n {
				t.Fatalf("%d waiters, want %d", len(l.waiters), n)
			}
		}
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		gone, cancel := context.WithCancel(context.Background())
		goneErr := make(chan error, 1)
		for i := range 6 {
			if i == 3 {
				// The fourth waiter gives up before its turn.
				go func() { goneErr <- l.LockContext(gone) }()
				waiting(i + 1)
				continue
			}
			wg.Go(func() {
				l.Lock()
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				l.Unlock()
			})
			waiting(i + 1)
		}
		cancel()
		if err := <-goneErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("LockContext after its context ended: %v", err)
		}
		waiting(5)
		l.Unlock()
		wg.Wait()
		if !slices.Equal(order, []int{0, 1, 2, 4, 5}) {
			t.Errorf("granted in order %v, want 0 1 2 4 5", order)
		}
		// Free again: taken at once, even with a context that has ended.
		ctx, stop := context.WithCancel(context.Background())
		stop()
		if err := l.LockContext(ctx); err != nil {
			t.Fatalf("LockContext of a free lock: %v", err)
		}
		l.Unlock()
	})
}
