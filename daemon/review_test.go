package daemon_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestProposalReview: a persona write opens one proposal per ETag (and
// says so in the log and the status), approval merges it into main as
// the person, rejection removes the branch and leaves a tag, and a
// proposal merged by git loses its branch on the push.
func TestProposalReview(t *testing.T) {
	td := startConsole(t)
	ctx := context.Background()
	bare := filepath.Join(td.repos, "bot.git")
	soul, err := td.c.ReadFile(ctx, "bot", "SOUL.md", "")
	if err != nil {
		t.Fatal(err)
	}
	p1, err := td.c.WriteFile(ctx, "bot", "SOUL.md", "", soul.ETag, []byte("# Soul\n\nWarmer now. MARKER-TWO\n"))
	if err != nil || p1.Branch != "proposals/bot/1" {
		t.Fatalf("proposal: %+v %v", p1, err)
	}
	again, err := td.c.WriteFile(ctx, "bot", "SOUL.md", "", soul.ETag, []byte("# Soul\n\nOnce more.\n"))
	if err != nil || again.Branch != "proposals/bot/1" || again.Commit != p1.Commit {
		t.Fatalf("the same ETag again: %+v %v, want the proposal it opened", again, err)
	}
	tools, _ := td.c.ReadFile(ctx, "bot", "TOOLS.md", "")
	p2, err := td.c.WriteFile(ctx, "bot", "TOOLS.md", "", tools.ETag, []byte("# Tools\n\nA hammer.\n"))
	if err != nil || p2.Branch != "proposals/bot/2" {
		t.Fatalf("second proposal: %+v %v", p2, err)
	}
	st, _ := td.c.Status(ctx)
	for _, a := range st.Agents {
		if a.Name == "bot" && a.OpenProposals != 2 {
			t.Fatalf("status says %d open proposals, want 2", a.OpenProposals)
		}
	}

	var ps []api.Proposal
	if code := adaCall(t, td, "GET", "/v1/agents/bot/proposals", nil, &ps); code != 200 || len(ps) != 2 {
		t.Fatalf("proposals: %d %+v", code, ps)
	}
	if ps[0].ID != "1" || len(ps[0].Files) != 1 || ps[0].Files[0] != "SOUL.md" || !strings.Contains(ps[0].Diff, "+Warmer now. MARKER-TWO") || !strings.Contains(ps[0].Diff, "-Calm and exact.") {
		t.Fatalf("proposal 1: %+v", ps[0])
	}

	var ok api.Approved
	if code := adaCall(t, td, "POST", "/v1/agents/bot/proposals/1/approve", nil, &ok); code != 200 || ok.Commit == "" {
		t.Fatalf("approve: %d", code)
	}
	if a := strings.TrimSpace(git(t, bare, "log", "-1", "--format=%an <%ae>|%H", "main")); a != "Ada Lovelace <ada@example.com>|"+ok.Commit {
		t.Fatalf("main's last commit: %q, want Ada's %s", a, ok.Commit)
	}
	if b := git(t, bare, "branch", "--list", "proposals/bot/1"); b != "" {
		t.Fatalf("the approved proposal's branch stays: %q", b)
	}
	p, _ := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if !strings.Contains(p.Prompt, "MARKER-TWO") {
		t.Fatal("the approved soul is not served")
	}

	if code := adaCall(t, td, "POST", "/v1/agents/bot/proposals/2/reject", nil, nil); code != http.StatusNoContent {
		t.Fatalf("reject: %d", code)
	}
	if b := git(t, bare, "branch", "--list", "proposals/*"); b != "" {
		t.Fatalf("branches after the rejection: %q", b)
	}
	if tag := git(t, bare, "tag", "-l", "-n5", "proposals/bot/2-rejected"); !strings.Contains(tag, "rejected by Ada Lovelace") {
		t.Fatalf("the rejection's tag: %q", tag)
	}
	if code := adaCall(t, td, "POST", "/v1/agents/bot/proposals/2/approve", nil, nil); code != http.StatusNotFound {
		t.Fatalf("approving a rejected proposal: %d, want 404", code)
	}

	// A proposal a person merges by git goes when main is pushed.
	soul, _ = td.c.ReadFile(ctx, "bot", "SOUL.md", "")
	p3, err := td.c.WriteFile(ctx, "bot", "SOUL.md", "", soul.ETag, []byte("# Soul\n\nMerged by hand. MARKER-TWO\n"))
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "c")
	git(t, t.TempDir(), "clone", "-q", td.remote+"/bot.git", clone)
	git(t, clone, "fetch", "-q", "origin", p3.Branch)
	git(t, clone, "merge", "-q", "--ff-only", "FETCH_HEAD")
	git(t, clone, "push", "-q", "origin", "main")
	if b := git(t, bare, "branch", "--list", "proposals/*"); b != "" {
		t.Fatalf("a proposal merged by git stays: %q", b)
	}
}

// TestProposalApprovalValidated: an approval that main would refuse is
// refused with the push's message, and nothing moves.
func TestProposalApprovalValidated(t *testing.T) {
	td := startConsole(t)
	ctx := context.Background()
	bare := filepath.Join(td.repos, "bot.git")
	soul, _ := td.c.ReadFile(ctx, "bot", "SOUL.md", "")
	if _, err := td.c.WriteFile(ctx, "bot", "SOUL.md", "", soul.ETag, []byte("# Soul\n\nA new soul.\n")); err != nil {
		t.Fatal(err)
	}
	// Someone breaks the proposal's branch by git: an agent.yaml that a
	// push to main is refused for.
	clone := filepath.Join(t.TempDir(), "c")
	git(t, t.TempDir(), "clone", "-q", td.remote+"/bot.git", clone)
	git(t, clone, "fetch", "-q", "origin", "proposals/bot/1")
	git(t, clone, "checkout", "-q", "-b", "p", "FETCH_HEAD")
	testenv.WriteFiles(t, clone, map[string]string{"agent.yaml": "name: bot\ntype: nonsense\n"})
	git(t, clone, "commit", "-qam", "break agent.yaml")
	git(t, clone, "push", "-q", "origin", "p:proposals/bot/1")
	main := git(t, bare, "rev-parse", "main")
	code := adaCall(t, td, "POST", "/v1/agents/bot/proposals/1/approve", nil, nil)
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("approving an invalid proposal: %d, want 422", code)
	}
	if git(t, bare, "rev-parse", "main") != main {
		t.Fatal("a refused approval moved main")
	}
}

// TestHistoryOfWrites: the agents' writes on live, as diffs, by user.
func TestHistoryOfWrites(t *testing.T) {
	td := startConsole(t)
	ctx := context.Background()
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{User: "ines", Text: "Likes oat milk."}); err != nil {
		t.Fatal(err)
	}
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "The lift is fixed."}); err != nil {
		t.Fatal(err)
	}
	var hs []api.HistoryEntry
	if code := adaCall(t, td, "GET", "/v1/agents/bot/history?user=ines", nil, &hs); code != 200 || len(hs) != 1 {
		t.Fatalf("history of ines: %d %+v", code, hs)
	}
	if h := hs[0]; h.Agent != "bot" || h.User != "ines" || !strings.Contains(h.Diff, "+Likes oat milk.") || len(h.Files) == 0 {
		t.Fatalf("entry: %+v", h)
	}
	if code := adaCall(t, td, "GET", "/v1/agents/bot/history?limit=1", nil, &hs); code != 200 || len(hs) != 1 || !strings.Contains(hs[0].Diff, "lift is fixed") {
		t.Fatalf("newest write: %d %+v", code, hs)
	}
	before := hs[0].Commit
	if code := adaCall(t, td, "GET", "/v1/agents/bot/history?limit=1&before="+before, nil, &hs); code != 200 || len(hs) != 1 || hs[0].User != "ines" {
		t.Fatalf("the page below: %d %+v", code, hs)
	}

	var ds []api.Deploy
	if code := adaCall(t, td, "GET", "/v1/agents/bot/deploys", nil, &ds); code != 200 || len(ds) != 1 || ds[0].Subject != "workspace" {
		t.Fatalf("deploys: %d %+v", code, ds)
	}
	wt := newWorkTree(t, botFiles)
	testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": "# Soul\n\nBolder. MARKER-THREE\n"})
	git(t, wt, "commit", "-qam", "bolder soul")
	git(t, wt, "pull", "-q", "--no-rebase", "--allow-unrelated-histories", "-s", "ours", td.remote+"/bot.git", "main")
	td.push(t, wt, "bot")
	adaCall(t, td, "GET", "/v1/agents/bot/deploys", nil, &ds)
	if len(ds) < 2 {
		t.Fatalf("deploys after a push: %+v", ds)
	}
	var pd api.PromptDiff
	if code := adaCall(t, td, "POST", "/v1/agents/bot/prompt/diff", api.PromptDiffRequest{From: ds[len(ds)-1].Commit, To: ds[0].Commit}, &pd); code != 200 || len(pd.Kinds) != 3 {
		t.Fatalf("prompt diff: %d %+v", code, pd)
	}
	if k := pd.Kinds[0]; k.Kind != "main" || !strings.Contains(k.Diff, "+Bolder. MARKER-THREE") || !strings.Contains(k.Before, "MARKER-ONE") {
		t.Fatalf("main kind: %+v", k)
	}
}
