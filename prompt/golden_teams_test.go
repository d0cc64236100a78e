package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quirehq/quire/workspace"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestGoldenTeams assembles testdata/teams, a repository whose agents
// name delegation targets, a team and their availability, with files in
// _shared/ and a team directory, and an agent with a budget in tokens:
// the virtual files, the shared and team files, and the token budget's
// report, compared with testdata/golden/teams-*.txtar.
func TestGoldenTeams(t *testing.T) {
	w, err := Open(workspace.DirFS("testdata/teams"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The one finding: night-porter's SOUL.md is over its budget in tokens.
	want := "agents/night-porter/SOUL.md:5: warning: SOUL.md is 1,335 tokens, over the per-file budget of 120 tokens: lines 5–43 (4,711 chars) are cut from the prompt"
	if probs := w.Check(); len(probs) != 1 || probs[0].String() != want {
		t.Fatalf("testdata/teams: got problems %v, want only %s", probs, want)
	}
	cases := []struct {
		name string
		req  Request
	}{
		{"concierge-main-dm", Request{Agent: "concierge", Session: SessionMain, Channel: ChannelDM}},
		{"concierge-main-group", Request{Agent: "concierge", Session: SessionMain, Channel: ChannelGroup}},
		{"concierge-subagent-dm", Request{Agent: "concierge", Session: SessionSubagent}},
		{"concierge-first-run", Request{Agent: "concierge", User: "new-guest"}},
		{"concierge-caller-virtual", Request{Agent: "concierge", VirtualFiles: []VirtualFile{{Name: workspace.TeamFile, Content: "Supplied by the caller."}}}},
		{"night-porter-tokens", Request{Agent: "night-porter"}},
		{"night-porter-window", Request{Agent: "night-porter", ContextWindow: 1000, ContextShare: 0.2}},
		{"tutor-main-dm", Request{Agent: "tutor"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			req.Now, req.Tools, req.CountPromptTokens = noon, goldenTools, true
			comment := fmt.Sprintf("testdata/teams agent=%s user=%q session=%s channel=%s context_window=%d context_share=%g virtual=%d now=%s\n",
				c.req.Agent, c.req.User, c.req.Session, c.req.Channel, c.req.ContextWindow, c.req.ContextShare, len(c.req.VirtualFiles), noon.Format("2006-01-02T15:04:05Z07:00"))
			checkGolden(t, "teams-"+c.name, comment, assemble(t, w, req))
		})
	}
}

// checkGolden compares res with testdata/golden/<name>.txtar, or writes
// it there with -update.
func checkGolden(t *testing.T, name, comment string, res Result) {
	t.Helper()
	rep, err := json.MarshalIndent(res.Report, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := res.Report.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	got := txtar.Format(&txtar.Archive{
		Comment: []byte(comment),
		Files: []txtar.File{
			{Name: "prompt.txt", Data: []byte(res.Prompt)},
			{Name: "report.txt", Data: text.Bytes()},
			{Name: "report.json", Data: append(rep, '\n')},
		},
	})
	path := filepath.Join("testdata", "golden", name+".txtar")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompt -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the assembled prompt; if the change is intended, run go test ./prompt -update and review the diff\n%s", path, firstDiff(want, got))
	}
}
