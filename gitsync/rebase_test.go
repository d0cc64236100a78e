package gitsync

import (
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestRebaseLive: a daemon's write pushed on a live that moved meanwhile
// is merged onto it when re-applying the write would give the same (a
// daily log both sides appended to, files only one side changed), and is
// refused as stale otherwise (a file both changed: an If-Match the
// daemon checked no longer holds; a person's commit; a base that is not
// in live).
func TestRebaseLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, url, _ := testHost(t, HostOptions{Live: true})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "MEMORY.md": "# Memory\n\none\n",
		"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.Resolve("live")
	if err != nil {
		t.Fatal(err)
	}
	// What another writer put on live after the daemon fetched base.
	cur := agentWrite(t, r, map[string]string{"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n\n## 10:00\n\nfrom the host\n",
		"users/u/USER.md": "host\n"})
	commitOn := func(sig bool, files map[string]string) plumbing.Hash {
		var ws []FileWrite
		for p, c := range files {
			ws = append(ws, FileWrite{Path: p, Content: []byte(c)})
		}
		req := CommitRequest{Author: agentSig, Message: "a daemon's write", Writes: ws}
		if !sig {
			req.Author.Email = "person@example.org"
		}
		c, err := r.CommitOn(ctx, base, req)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name  string
		new   plumbing.Hash
		merge bool
	}{
		{"an append to the same daily log", commitOn(true, map[string]string{"memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nfirst\n\n## 10:01\n\nfrom a follower\n"}), true},
		{"a file only the write changed", commitOn(true, map[string]string{"MEMORY.md": "# Memory\n\none\ntwo\n"}), true},
		{"a file both changed", commitOn(true, map[string]string{"users/u/USER.md": "follower\n"}), false},
		{"a person's commit", commitOn(false, map[string]string{"MEMORY.md": "# Memory\n\nperson\n"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov := newOverlay(r, nil)
			out := &pushOutput{}
			plan, reason := h.rebaseLive(ctx, r, ov, command{Name: LiveRef, Old: base, New: tt.new}, cur, out)
			if !tt.merge {
				if !strings.HasPrefix(reason, "non-fast-forward") || plan != nil {
					t.Fatalf("reason %q plan %v, want a stale refusal", reason, plan)
				}
				return
			}
			if reason != "" || plan == nil || !plan.rebased || plan.old != cur {
				t.Fatalf("reason %q plan %+v, want a merge onto live", reason, plan)
			}
			snap, err := newSnapshot(plan.p, plan.new)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ path, want string }{
				{"users/u/USER.md", "host\n"},
			} {
				if got, _ := snap.ReadFile(c.path); string(got) != c.want {
					t.Errorf("%s = %q, want %q", c.path, got, c.want)
				}
			}
			log, _ := snap.ReadFile("memory/2026-01-02.md")
			wants := []string{"from the host", "first"}
			if tt.name == "an append to the same daily log" {
				wants = append(wants, "from a follower")
			}
			for _, want := range wants {
				if !strings.Contains(string(log), want) {
					t.Errorf("the merged daily log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}
