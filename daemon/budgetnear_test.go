package daemon_test

import (
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
)

// TestPushReportWarnsNearBudget: the push report warns about a context
// file at 80 % of its per-file budget, in the words of quire check.
func TestPushReportWarnsNearBudget(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, map[string]string{
		"agent.yaml": "name: bot\nbudget:\n  per_file: 1000\n",
		"AGENTS.md":  strings.Repeat("a", 850) + "\n",
		"SOUL.md":    strings.Repeat("s", 700) + "\n",
	})
	out := td.push(t, wt, "bot")
	if !strings.Contains(out, "remote: bot: warning: AGENTS.md is 851 chars, 85 % of the per-file budget of 1,000: past 149 more chars it is cut from the prompt") {
		t.Errorf("the push report does not warn about AGENTS.md at 85 %% of its budget:\n%s", out)
	}
	if strings.Contains(out, "SOUL.md is") {
		t.Errorf("the push report warns about SOUL.md at 70 %%:\n%s", out)
	}
}
