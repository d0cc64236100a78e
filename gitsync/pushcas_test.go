package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPushCAS: a daemon's write pushed on an older live is merged by a
// quire host with two branches (the push goes without a lease there, so
// a writer that moved live between the fetch and the push does not make
// it fail), and refused as stale by any other remote: a plain bare
// repository over file://, a quire host without live. A write that
// conflicts with what moved is refused as stale by the quire host too.
func TestPushCAS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := map[string]string{"AGENTS.md": "v0\n", "MEMORY.md": "# Memory\n\none\n",
		"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n"}
	appendLog := func(entry string) map[string]string {
		return map[string]string{"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n\n" + entry}
	}
	// setup returns the remote's URL, the remote as a Repository, and a
	// mirror holding live at the base the write goes on.
	type remote struct {
		name   string
		setup  func(t *testing.T) (url string, r *Repository)
		merges bool
		// gitOnly turns the native send-pack off; native says the
		// pushes go without git.
		gitOnly, native bool
	}
	liveHost := func(t *testing.T) (string, *Repository) {
		h, url, _ := testHost(t, HostOptions{Live: true})
		git(t, newWorkRepo(t, files), "push", "-q", url+"/ws.git", "main")
		r, err := h.Repository("ws")
		if err != nil {
			t.Fatal(err)
		}
		return url + "/ws.git", r
	}
	remotes := []remote{
		{name: "quire host with live", setup: liveHost, merges: true, native: true},
		{name: "quire host with live, git push", setup: liveHost, merges: true, gitOnly: true},
		{name: "quire host without live", setup: func(t *testing.T) (string, *Repository) {
			h, url, _ := testHost(t, HostOptions{})
			git(t, newWorkRepo(t, files), "push", "-q", url+"/ws.git", "main:main", "main:live")
			r, err := h.Repository("ws")
			if err != nil {
				t.Fatal(err)
			}
			return url + "/ws.git", r
		}, merges: false},
		{name: "plain bare repository", setup: func(t *testing.T) (string, *Repository) {
			bare := t.TempDir()
			git(t, bare, "init", "-q", "--bare", "-b", "main")
			git(t, newWorkRepo(t, files), "push", "-q", bare, "main:main", "main:live")
			r, err := Open(bare)
			if err != nil {
				t.Fatal(err)
			}
			return "file://" + bare, r
		}, merges: false},
	}
	refusals := map[string]string{} // the conflicting write's error, by remote
	for _, rm := range remotes {
		t.Run(rm.name, func(t *testing.T) {
			url, up := rm.setup(t)
			var mirror *Repository
			defer func() {
				if mirror == nil || t.Failed() {
					return
				}
				native, cli := mirror.sp.native.Load(), mirror.sp.cli.Load()
				if rm.native && (native == 0 || cli != 0) {
					t.Errorf("%d native pushes, %d with git; want every push native (last fallback: %v)", native, cli, mirror.sp.lastFallback)
				}
				if !rm.native && (native != 0 || cli == 0) {
					t.Errorf("%d native pushes, %d with git; want every push with git", native, cli)
				}
			}()
			// Live's history: what a pack must not carry again.
			for i := range 20 {
				agentWrite(t, up, map[string]string{fmt.Sprintf("users/u%d/USER.md", i): "earlier\n"})
			}
			mirrorDir := t.TempDir()
			git(t, mirrorDir, "clone", "-q", "--bare", url, ".")
			var err error
			mirror, err = Open(mirrorDir)
			if err != nil {
				t.Fatal(err)
			}
			mirror.sp.gitOnly.Store(rm.gitOnly)
			base, err := mirror.Resolve("refs/heads/live")
			if err != nil {
				t.Fatal(err)
			}
			// Another writer moves live after the mirror fetched it.
			cur := agentWrite(t, up, appendLog("## 10:00\n\nfrom the host\n"))
			write := func(files map[string]string) plumbing.Hash {
				var ws []FileWrite
				for p, c := range files {
					ws = append(ws, FileWrite{Path: p, Content: []byte(c)})
				}
				h, err := mirror.CommitOn(ctx, base, CommitRequest{Author: agentSig, Message: "a follower's write", Writes: ws})
				if err != nil {
					t.Fatal(err)
				}
				return h
			}

			// A write the host made too (the same daily log): never
			// accepted without a merge.
			pushed := write(appendLog("## 10:01\n\nfrom a follower\n"))
			packsBefore := packIndexes(t, up.Path())
			now, err := mirror.PushCAS(ctx, mustRemote(t, url), LiveRef, base, pushed)
			if !rm.merges {
				if !errors.Is(err, ErrStale) {
					t.Fatalf("push on an older live: %v, want ErrStale", err)
				}
				if got, _ := up.Resolve("live"); got != cur {
					t.Fatalf("live moved to %s on a refused push", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("push on an older live to a quire host: %v, want it merged", err)
			}
			live, err := up.Resolve("live")
			if err != nil {
				t.Fatal(err)
			}
			snap, err := up.SnapshotOf(live)
			if err != nil {
				t.Fatal(err)
			}
			log, _ := snap.ReadFile("memory/2026-01-02.md")
			if !strings.Contains(string(log), "from the host") || !strings.Contains(string(log), "from a follower") {
				t.Fatalf("live's daily log after the merge:\n%s", log)
			}
			if ok, _ := up.IsAncestor(cur.String(), live.String()); !ok {
				t.Fatal("the merge does not hold the host's write")
			}
			if now != live || now == pushed {
				t.Errorf("PushCAS says the remote's live is %s; it is %s (pushed %s)", now, live, pushed)
			}
			// The host named live's recent values as ".have": the pack
			// held the write (commit, trees, blob), not live's history,
			// and the merge added as few.
			if n := newObjects(t, up.Path(), packsBefore); n > 12 {
				t.Errorf("the push and its merge stored %d objects; live's history was sent again", n)
			}

			// MEMORY.md moved on live meanwhile: a write to it from the
			// old base is stale (its If-Match no longer holds).
			agentWrite(t, up, map[string]string{"MEMORY.md": "# Memory\n\nhost\n"})
			_, err = mirror.PushCAS(ctx, mustRemote(t, url), LiveRef, base, write(map[string]string{"MEMORY.md": "# Memory\n\nfollower\n"}))
			if !errors.Is(err, ErrStale) {
				t.Fatalf("a conflicting write on an older live: %v, want ErrStale", err)
			}
			refusals[rm.name] = err.Error()
		})
	}
	// The native send-pack answers as git push does.
	if n, g := refusals["quire host with live"], refusals["quire host with live, git push"]; n != g {
		t.Errorf("a conflicting write refused natively:\n%s\nwith git push:\n%s", n, g)
	}
}

// packIndexes lists the pack indexes of the repository at dir.
func packIndexes(t *testing.T, dir string) map[string]bool {
	t.Helper()
	idx, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range idx {
		out[p] = true
	}
	return out
}

// newObjects counts the objects in the packs of dir that are not in before.
func newObjects(t *testing.T, dir string, before map[string]bool) int {
	t.Helper()
	n := 0
	for p := range packIndexes(t, dir) {
		if before[p] {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "show-index")
		cmd.Stdin = f
		out, err := cmd.Output()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(string(out), "\n")
	}
	return n
}
