package daemon_test

import (
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
		{"skills/PDF/SKILL.md", "skills/PDF and skills/pdf differ only in case"},
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
