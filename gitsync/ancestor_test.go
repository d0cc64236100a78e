package gitsync

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// TestIsAncestor: ancestry on a history with a side branch, a merge and
// commit dates that lie (a merge dated years before its parents, a side
// commit dated in the future): the answer never depends on the dates.
func TestIsAncestor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(date string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(date, msg string) string {
		run(date, "commit", "-q", "--allow-empty", "-m", msg)
		return run(date, "rev-parse", "HEAD")
	}
	run("2026-01-01T00:00:00Z", "init", "-q", "-b", "main")
	c1 := commit("2026-01-01T00:00:00Z", "c1")
	c2 := commit("2026-01-02T00:00:00Z", "c2")
	c3 := commit("2026-01-03T00:00:00Z", "c3")
	run("2026-01-01T00:00:00Z", "checkout", "-q", "-b", "side", c1)
	x1 := commit("2030-01-01T00:00:00Z", "x1 from the future")
	x2 := commit("2026-01-02T12:00:00Z", "x2")
	run("2026-01-01T00:00:00Z", "checkout", "-q", "main")
	run("2000-01-01T00:00:00Z", "merge", "-q", "--no-ff", "-m", "m dated in the past", "side")
	m := run("2000-01-01T00:00:00Z", "rev-parse", "HEAD")
	c4 := commit("2026-01-04T00:00:00Z", "c4")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b string
		want bool
	}{
		{c1, c1, true}, {c1, c3, true}, {c3, c1, false}, {c2, c3, true},
		{x1, c3, false}, {c3, x1, false}, {x1, x2, true},
		{x1, m, true}, {x2, m, true}, {c3, m, true}, {c1, m, true},
		{m, c3, false}, {m, x2, false}, {x1, c4, true}, {c2, c4, true}, {c4, m, false},
	}
	names := map[string]string{c1: "c1", c2: "c2", c3: "c3", c4: "c4", x1: "x1", x2: "x2", m: "m"}
	for _, tt := range tests {
		var got bool
		err := r.locked(func(st storer.EncodedObjectStorer) error {
			var err error
			got, err = isAncestor(st, plumbing.NewHash(tt.a), plumbing.NewHash(tt.b))
			return err
		})
		if err != nil || got != tt.want {
			t.Errorf("isAncestor(%s, %s) = %v, %v; want %v", names[tt.a], names[tt.b], got, err, tt.want)
		}
	}
}
