package daemon_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console"
)

// TestConsoleOverviewBudget checks that the overview's budget use is the
// prompt report's: what the context files inject against the total
// budget, never more than it, with the cut file named as cut.
func TestConsoleOverviewBudget(t *testing.T) {
	td := startConsoleB(t)
	files := map[string]string{}
	for k, v := range botFiles {
		files[k] = v
	}
	files["agent.yaml"] = "name: bot\ntype: predefined\nbudget:\n  per_file: 200\n  total: 500\n"
	files["SOUL.md"] = "# Soul\n\n" + strings.Repeat("Calm and exact, always. ", 40)
	td.push(t, newWorkTree(t, files), "bot")
	b := newBrowser(t, "http://"+td.d.APIAddr())
	b.login("tok-ada")

	st, _, body := b.do("GET", "/ui/api/overview", "", nil)
	var ov console.Overview
	if st != 200 || json.Unmarshal([]byte(body), &ov) != nil || len(ov.Agents) != 1 {
		t.Fatalf("overview: %d %s", st, body)
	}
	st, _, body = b.change("POST", "/v1/agents/bot/prompt", `{"session":"main","channel":"dm"}`, nil)
	var pr api.PromptResponse
	if st != 200 || json.Unmarshal([]byte(body), &pr) != nil {
		t.Fatalf("prompt: %d %s", st, body)
	}
	got, rep := ov.Agents[0].Budget, pr.Report
	if got.Injected != rep.InjectedChars || got.Total != rep.Budget.TotalChars || got.Unit != "chars" || got.TotalChars != rep.InjectedChars || got.LimitChars != 500 {
		t.Errorf("overview budget %+v, want the report's %d injected of %d chars", got, rep.InjectedChars, rep.Budget.TotalChars)
	}
	if got.Injected > got.Total {
		t.Errorf("injected %d over the total %d: the prompt never holds more than its budget", got.Injected, got.Total)
	}
	if !slices.Contains(got.Cut, "SOUL.md") || len(got.Dropped) != 0 {
		t.Errorf("cut %v dropped %v, want SOUL.md cut", got.Cut, got.Dropped)
	}
	if l := got.Largest; l.File != "SOUL.md" || l.Status != "truncated" || l.Injected >= l.Size || l.Limit != 200 {
		t.Errorf("largest %+v, want SOUL.md truncated to its 200-char budget", l)
	}
}
