package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// crewFiles: lead and mate are the team crew (in two time zones),
// outsider is in no team.
var crewFiles = map[string]string{
	"lead/agent.yaml":     "name: lead\nteam: crew\ntimezone: Pacific/Auckland\n",
	"lead/SOUL.md":        "# Soul\n\nLead.\n",
	"mate/agent.yaml":     "name: mate\nteam: crew\n",
	"mate/SOUL.md":        "# Soul\n\nMate.\n",
	"outsider/agent.yaml": "name: outsider\n",
	"outsider/SOUL.md":    "# Soul\n\nOutsider.\n",
}

// TestTeamAppendOneCommit: a memory append naming teammates writes each
// member's daily log (each in its own time zone) in one commit on live;
// agents outside the team, in another repository or not allowed by the
// token are refused and nothing is written.
func TestTeamAppendOneCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok-lead": {"lead"}, "tok-all": {"*"}}})
	td.push(t, newWorkTree(t, crewFiles), "crew")
	td.push(t, newWorkTree(t, botFiles), "bot")
	waitFor(t, "the agents to be deployed", func() bool {
		_, e1 := td.c.Prompt(ctx, "mate", api.PromptRequest{})
		_, e2 := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return e1 == nil && e2 == nil
	})
	now := time.Date(2026, 11, 22, 12, 30, 0, 0, time.UTC)
	bare := filepath.Join(td.repos, "crew.git")
	before := strings.TrimSpace(git(t, td.repos, "--git-dir", bare, "rev-parse", "live"))
	res, err := td.c.MemoryAppend(ctx, "lead", api.AppendRequest{Text: "Shift change at noon.", Agents: []string{"mate", "lead"}, Now: &now})
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := "lead:memory/2026-11-23.md mate:memory/2026-11-22.md" // Auckland is a day ahead
	var got []string
	for _, w := range res.Team.Written {
		got = append(got, w.Agent+":"+w.Path)
	}
	if strings.Join(got, " ") != wantPaths {
		t.Fatalf("written %v, want %s", got, wantPaths)
	}
	changed := git(t, td.repos, "--git-dir", bare, "diff", "--name-only", before, "live")
	if strings.TrimSpace(changed) != "lead/memory/2026-11-23.md\nmate/memory/2026-11-22.md" || res.Commit != strings.TrimSpace(git(t, td.repos, "--git-dir", bare, "rev-parse", "live")) ||
		strings.TrimSpace(git(t, td.repos, "--git-dir", bare, "rev-list", "--count", before+"..live")) != "1" {
		t.Fatalf("one commit with both logs: changed\n%s", changed)
	}
	show := git(t, td.repos, "--git-dir", bare, "show", "live:mate/memory/2026-11-22.md")
	if !strings.Contains(show, "## 12:30\n") || !strings.Contains(show, "Shift change at noon.") {
		t.Fatalf("mate's log:\n%s", show)
	}

	tcp := &client.Client{BaseURL: "http://" + td.d.APIAddr(), Token: "tok-lead"}
	for _, c := range []struct {
		c      *client.Client
		agents []string
		status int
		say    string
	}{
		{td.c, []string{"outsider"}, 400, `"outsider" is not in team "crew"`},
		{td.c, []string{"bot"}, 400, `"bot" is in another repository`},
		{td.c, []string{"nobody"}, 404, `no deployed agent "nobody"`},
		{tcp, []string{"mate"}, 403, `this token may not use agent "mate"`},
	} {
		_, err := c.c.MemoryAppend(ctx, "lead", api.AppendRequest{Text: "Not written.", Agents: c.agents})
		if apiStatus(err) != c.status || err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("agents %v: %v, want %d saying %s", c.agents, err, c.status, c.say)
		}
	}
	if after := git(t, td.repos, "--git-dir", bare, "rev-parse", "live"); strings.TrimSpace(after) != res.Commit {
		t.Fatalf("a refused team append moved live")
	}
	if _, err := td.c.MemoryAppend(ctx, "outsider", api.AppendRequest{Text: "x", Agents: []string{"lead"}}); apiStatus(err) != 400 || !strings.Contains(err.Error(), "in no team") {
		t.Errorf("an agent in no team: %v", err)
	}
}

// TestSharedChangeReachesEveryAgent: a change to _shared/CULTURE.md in a
// --dir working tree is served to every agent of the repository after
// the watcher's debounce, without a push.
func TestSharedChangeReachesEveryAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newWorkTree(t, copyTree(t, "../prompt/testdata/teams"))
	td := startDaemon(t, daemon.Options{Dir: dir})
	agents := []string{"concierge", "night-porter", "tutor"}
	for _, a := range agents {
		waitFor(t, a+" to serve the culture", func() bool {
			p, err := td.c.Prompt(ctx, a, api.PromptRequest{})
			return err == nil && strings.Contains(p.Prompt, "We answer in the guest's language")
		})
	}
	if err := os.WriteFile(filepath.Join(dir, "_shared", "CULTURE.md"), []byte("# House culture\n\nWe close the door softly. NEW-CULTURE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		waitFor(t, a+" to serve the new culture", func() bool {
			p, err := td.c.Prompt(ctx, a, api.PromptRequest{})
			return err == nil && strings.Contains(p.Prompt, "NEW-CULTURE") && !strings.Contains(p.Prompt, "We answer in the guest's language")
		})
	}
}
