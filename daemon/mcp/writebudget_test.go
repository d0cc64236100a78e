package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestWriteAnswerSaysBudget: every write's answer, through the API and the
// MCP tools, carries the written file's budget status after the write:
// fits (with the 80 % warning when it is near its budget), truncated with
// what is cut, dropped when the total is used up, not_in_prompt for a file
// no session injects.
func TestWriteAnswerSaysBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "beta", "beta", map[string]string{
		"agent.yaml": "name: beta\nbudget:\n  per_file: 300\n  total: 2000\n",
		"AGENTS.md":  "# Agents\n\nBe brief.\n",
		"SOUL.md":    "# Soul\n\nCalm.\n",
		"MEMORY.md":  "# Memory\n\nShort.\n",
	})
	td.deploy(t, "gamma", "gamma", map[string]string{
		"agent.yaml": "name: gamma\nbudget:\n  per_file: 300\n  total: 600\n",
		"AGENTS.md":  "# Agents\n\n" + strings.Repeat("a", 280) + "\n",
		"SOUL.md":    "# Soul\n\n" + strings.Repeat("s", 280) + "\n",
		"MEMORY.md":  "# Memory\n\nShort.\n",
	})
	write := func(agent, content string) api.BudgetStatus {
		t.Helper()
		f, err := td.c.ReadFile(ctx, agent, "MEMORY.md", "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := td.c.WriteFile(ctx, agent, "MEMORY.md", "", f.ETag, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return res.Budget
	}
	lines := func(n int) string { return strings.Repeat(strings.Repeat("m", 19)+"\n", n) }

	if b := write("beta", lines(5)); b.Status != api.BudgetFits || b.Chars != 100 || b.InjectedChars != 100 || b.Warning != "" {
		t.Errorf("100 chars of a 300-char budget: %+v", b)
	}
	if b := write("beta", lines(13)); b.Status != api.BudgetFits || !strings.Contains(b.Warning, "86 % of the per-file budget of 300") {
		t.Errorf("260 chars of a 300-char budget: %+v, want fits with the 80 %% warning", b)
	}
	if b := write("beta", lines(40)); b.Status != api.BudgetTruncated || b.Chars != 800 || b.InjectedChars > 300 || !strings.Contains(b.Cut, "lines ") {
		t.Errorf("800 chars of a 300-char budget: %+v, want truncated with the lines cut", b)
	}
	if b := write("gamma", lines(5)); b.Status != api.BudgetDropped || b.InjectedChars != 0 || !strings.Contains(b.Cut, "all 100 chars") {
		t.Errorf("MEMORY.md after 600 chars of persona: %+v, want dropped", b)
	}

	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=beta&user=alice", nil)
	var appended, other api.WriteResponse
	callOK(t, cs, "memory_append", map[string]any{"text": "Alice likes tea."}, &appended)
	if appended.Budget.Status != api.BudgetFits || appended.Budget.Chars == 0 {
		t.Errorf("memory_append's answer: %+v, want today's log to fit", appended.Budget)
	}
	callOK(t, cs, "memory_write", map[string]any{"path": "memory/notes.md", "if_match": "*", "content": "# Notes\n"}, &other)
	if other.Budget.Status != api.BudgetNotInPrompt {
		t.Errorf("memory_write of memory/notes.md: %+v, want not_in_prompt", other.Budget)
	}
	// Daily logs are append-only here too.
	if e := callErr(t, cs, "memory_write", map[string]any{"path": appended.Path[len("users/alice/"):], "if_match": "*", "content": "x"}); e.Code != api.CodeNotWritable || !strings.Contains(e.Message, "memory_append") {
		t.Errorf("memory_write of a daily log: %+v, want not_writable pointing at memory_append", e)
	}
}
