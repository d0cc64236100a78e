package agent_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/testenv"
)

// A push whose agent.yaml delegates to an agent the repository does not
// have, or names a team that cannot name a directory, is refused with
// the file, line and field; fixed, it is taken.
func TestPushWithBadLinksIsRefused(t *testing.T) {
	dir := t.TempDir()
	h, err := gitsync.NewHost(dir, gitsync.HostOptions{AllowCreate: true, Validator: gitsync.TreeValidator(agent.WorkspaceChecks(agent.CheckOptions{}))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	work := testenv.NewWorkTree(t, map[string]string{
		"desk/agent.yaml":   "name: desk\ndelegation: [porter, ghost]\n",
		"desk/SOUL.md":      "Desk.\n",
		"porter/agent.yaml": "name: porter\nteam: Night Shift\nbudget: {unit: words}\n",
		"porter/SOUL.md":    "Porter.\n",
	}, "first")
	out, err := testenv.GitTry(work, "push", srv.URL+"/ws.git", "main")
	if err == nil {
		t.Fatalf("a push with bad links was accepted:\n%s", out)
	}
	for _, want := range []string{
		`remote: error:   desk/agent.yaml: line 2: delegation: "ghost" is not an agent of this repository; its agents are desk, porter`,
		`remote: error:   porter/agent.yaml: line 2: team "Night Shift" is not a team name`,
		`remote: error:   porter/agent.yaml: line 3: budget.unit "words" is unknown; use chars or tokens`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if _, err := testenv.GitTry(filepath.Join(dir, "ws.git"), "rev-parse", "--verify", "-q", "refs/heads/main"); err == nil {
		t.Error("the refused main exists on the server")
	}
	testenv.WriteFiles(t, work, map[string]string{
		"desk/agent.yaml":   "name: desk\ndelegation: [porter]\n",
		"porter/agent.yaml": "name: porter\nteam: night-shift\nbudget: {unit: tokens}\n",
	})
	testenv.Git(t, work, "commit", "-q", "-am", "fixed")
	if out, err := testenv.GitTry(work, "push", srv.URL+"/ws.git", "main"); err != nil {
		t.Fatalf("the fixed push was refused: %v\n%s", err, out)
	}
}
