package daemon_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/internal/testenv"
)

// TestPushRefusesNamesThatDifferOnlyInCase: a push that adds soul.md
// beside SOUL.md, or skills/PDF beside skills/pdf, is refused with both
// paths named and why (one cannot be checked out on macOS or Windows),
// as `quire check` reports it (the same workspace.CheckFiles rule).
func TestPushRefusesNamesThatDifferOnlyInCase(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, map[string]string{
		"agent.yaml":          "name: cased\n",
		"SOUL.md":             "# Soul\n",
		"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: PDFs.\n---\nbody\n",
	})
	td.push(t, wt, "cased")
	for _, tc := range []struct{ add, want string }{
		{"soul.md", "SOUL.md and soul.md differ only in case"},
		{"skills/PDF/SKILL.md", "skills/pdf and skills/PDF differ only in case"},
	} {
		testenv.WriteFiles(t, wt, map[string]string{tc.add: "---\nname: pdf\ndescription: PDFs.\n---\nother\n"})
		git(t, wt, "add", "-A")
		git(t, wt, "commit", "-qm", "add "+tc.add)
		out, err := gitMay(wt, "push", td.remote+"/cased.git", "main")
		if err == nil || !strings.Contains(out, tc.want) || !strings.Contains(out, "macOS or Windows") {
			t.Errorf("a push adding %s: %v\n%s\nwant a refusal saying %q", tc.add, err, out, tc.want)
		}
		git(t, wt, "reset", "-q", "--hard", "HEAD~1")
	}
}

// TestWriteRefusesNamesThatDifferOnlyInCase: an API write of a name that
// differs only in case from one already in its directory, the agent's
// or in a user's memory directory (the name after the old one in byte
// order: the one the rule names), is refused like a push of it, and
// nothing is committed; a write beside it of a name of its own goes
// through.
func TestWriteRefusesNamesThatDifferOnlyInCase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.push(t, newWorkTree(t, map[string]string{
		"agent.yaml":                "name: cased\n",
		"memory/Log.md":             "- a\n",
		"users/ann/memory/Notes.md": "- a\n",
		"users/ann/memory/diary.md": "- a\n",
	}), "cased")
	live := func() string {
		return strings.TrimSpace(git(t, td.repos, "--git-dir", filepath.Join(td.repos, "cased.git"), "rev-parse", "live"))
	}
	before := live()
	for _, tc := range []struct{ user, path, want string }{
		{"", "memory/log.md", "memory/Log.md and memory/log.md differ only in case"},
		{"ann", "memory/notes.md", "users/ann/memory/Notes.md and users/ann/memory/notes.md differ only in case"},
		// The written name sorts first: the clash is still the write's.
		{"ann", "memory/Diary.md", "users/ann/memory/diary.md and users/ann/memory/Diary.md differ only in case"},
	} {
		_, err := td.c.WriteFile(ctx, "cased", tc.path, tc.user, "*", []byte("- b\n"))
		if apiStatus(err) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a write of %s for %q: %v, want a 422 saying %q", tc.path, tc.user, err, tc.want)
		}
	}
	if after := live(); after != before {
		t.Fatalf("refused writes moved live from %s to %s", before, after)
	}
	if _, err := td.c.WriteFile(ctx, "cased", "memory/other.md", "ann", "*", []byte("- c\n")); err != nil {
		t.Fatalf("a write of a name of its own: %v", err)
	}
}
