package daemon_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestWritesRunThePushValidation: an API write is checked like a push
// (agent.Check on the tree it would make). A 5,000-char MEMORY.md for an
// agent with policy: reject and per_file: 2,000 is refused with a 422
// naming the finding, nothing is committed, and a person's push still
// goes through afterwards (it used to be accepted and then to block
// every push).
func TestWritesRunThePushValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, map[string]string{
		"agent.yaml": "name: strict\npolicy: reject\nbudget:\n  per_file: 2000\n",
		"AGENTS.md":  "# Strict\n",
		"MEMORY.md":  "# Memory\n",
	})
	td.push(t, wt, "strict")
	live := func() string {
		return strings.TrimSpace(git(t, td.repos, "--git-dir", filepath.Join(td.repos, "strict.git"), "rev-parse", "live"))
	}
	before := live()

	f, err := td.c.ReadFile(ctx, "strict", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = td.c.WriteFile(ctx, "strict", "MEMORY.md", "", f.ETag, []byte(strings.Repeat("Long memory line.\n", 280)))
	if apiStatus(err) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "MEMORY.md") || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("a MEMORY.md over a reject budget: %v, want a 422 naming MEMORY.md and its budget", err)
	}
	if after := live(); after != before {
		t.Fatalf("a refused write moved live from %s to %s", before, after)
	}
	// A write within the budget is accepted, and so is an append: the
	// check (like a push's) budgets no daily log.
	if _, err := td.c.MemoryAppend(ctx, "strict", api.AppendRequest{Text: strings.Repeat("x", 2500)}); err != nil {
		t.Fatalf("an append: %v", err)
	}
	// A write within the budget is accepted.
	if _, err := td.c.WriteFile(ctx, "strict", "MEMORY.md", "", f.ETag, []byte("# Memory\nshort\n")); err != nil {
		t.Fatalf("a write within the budget: %v", err)
	}
	// People can still push.
	testenv.WriteFiles(t, wt, map[string]string{"AGENTS.md": "# Strict\nBe brief.\n"})
	git(t, wt, "commit", "-qam", "brief")
	git(t, wt, "pull", "-q", "--no-rebase", "--no-edit", td.remote+"/strict.git", "live")
	if out, err := gitMay(wt, "push", td.remote+"/strict.git", "main"); err != nil {
		t.Fatalf("a person's push after the refused write: %v\n%s", err, out)
	}
}
