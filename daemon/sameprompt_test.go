package daemon_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
)

// TestServedPromptEqualsLocalAssembly holds the promise every consumer
// relies on: the prompt the daemon serves, from a working tree or from a
// pushed commit, is byte for byte the prompt assembled locally from the
// same files (what `quire prompt` and the language server show).
func TestServedPromptEqualsLocalAssembly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := copyTree(t, "../examples")
	dir := newWorkTree(t, files)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	ws, err := prompt.Open(os.DirFS(dir), prompt.Options{Seeds: templates.Seeds})
	if err != nil {
		t.Fatal(err)
	}
	local := func(agent, user string, session prompt.Session, channel prompt.Channel, mode prompt.Mode) string {
		a, err := ws.Agent(agent)
		if err != nil {
			t.Fatal(err)
		}
		set := skills.Load(1, skills.Options{WorkspaceDir: filepath.Join(dir, a.Dir)}.Sources())
		res, err := ws.Assemble(prompt.Request{Agent: agent, User: user, Session: session, Mode: mode, Channel: channel, Now: now,
			Skills: set.PromptSkills(skills.Request{Agent: agent, User: user, Allow: a.Config.Skills})})
		if err != nil {
			t.Fatal(err)
		}
		return res.Prompt
	}

	fromDir := startDaemon(t, daemon.Options{Dir: dir})
	fromPush := startDaemon(t, daemon.Options{})
	fromPush.push(t, dir, "examples")

	cases := []struct {
		agent, user string
		session     prompt.Session
		channel     prompt.Channel
		mode        prompt.Mode
	}{
		{"concierge", "ines.carvalho", prompt.SessionMain, prompt.ChannelDM, ""},
		{"concierge", "tg-5512093311", prompt.SessionMain, prompt.ChannelGroup, ""},
		{"studybuddy", "alice", prompt.SessionMain, prompt.ChannelDM, ""},
		{"studybuddy", "bob@example.com", prompt.SessionCron, prompt.ChannelDM, ""},
		{"concierge", "brand-new-user", prompt.SessionMain, prompt.ChannelDM, ""},  // seeds, predefined
		{"studybuddy", "brand-new-user", prompt.SessionMain, prompt.ChannelDM, ""}, // seeds, open
		{"concierge", "ines.carvalho", prompt.SessionMain, prompt.ChannelDM, prompt.ModeTask},
		{"studybuddy", "alice", prompt.SessionCron, prompt.ChannelDM, prompt.ModeNone},
	}
	var liveBefore string
	for i, c := range cases {
		want := local(c.agent, c.user, c.session, c.channel, c.mode)
		for name, td := range map[string]*testDaemon{"dir": fromDir, "push": fromPush} {
			var got api.PromptResponse
			waitFor(t, "the "+name+" daemon to serve "+c.agent, func() bool {
				got, err = td.c.Prompt(ctx, c.agent, api.PromptRequest{User: c.user, Session: c.session, Mode: c.mode, Channel: c.channel, Now: &now})
				return err == nil
			})
			if got.Prompt != want {
				t.Errorf("%s daemon, %s/%s/%s/%s: served prompt differs from local assembly (%d vs %d bytes)",
					name, c.agent, c.user, c.session, c.channel, len(got.Prompt), len(want))
			}
		}
		if i == 0 {
			liveBefore = git(t, dir, "ls-remote", fromPush.remote+"/examples.git", "refs/heads/live")
		}
	}
	// A new user's seeds are read, never written: no commit on live, no
	// directory in the work tree.
	if after := git(t, dir, "ls-remote", fromPush.remote+"/examples.git", "refs/heads/live"); after != liveBefore || liveBefore == "" {
		t.Errorf("reading prompts moved live: %q, then %q", liveBefore, after)
	}
	if _, err := os.Stat(filepath.Join(dir, "agents", "concierge", "users", "brand-new-user")); !os.IsNotExist(err) {
		t.Errorf("reading a new user's prompt created their directory (%v)", err)
	}
}

// TestSharedSkillTiers: the managed skills directory and ~/.agents/skills
// reach every agent's prompt, and a skill added there is served after the
// watcher's debounce, without a push.
func TestSharedSkillTiers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	managed, home := t.TempDir(), t.TempDir()
	testenv.WriteFiles(t, managed, map[string]string{"team-etiquette/SKILL.md": "---\nname: team-etiquette\ndescription: How the team writes to guests.\n---\nBe kind.\n"})
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, botFiles)
	td := startDaemon(t, daemon.Options{Dir: dir, SkillsDir: managed, HomeDir: home})
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Prompt, "<name>team-etiquette</name>") || !strings.Contains(p.Prompt, "<location>managed/team-etiquette/SKILL.md</location>") {
		t.Fatalf("the managed skill is not in the prompt")
	}
	testenv.WriteFiles(t, home, map[string]string{".agents/skills/my-shortcuts/SKILL.md": "---\nname: my-shortcuts\ndescription: The operator's own shortcuts.\n---\nUse them.\n"})
	waitFor(t, "a skill added to ~/.agents/skills to be served", func() bool {
		p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "<name>my-shortcuts</name>")
	})
}

// TestServedTeamPromptEqualsLocalAssembly extends the promise to the
// files agent.yaml derives and the repository shares (issue 27):
// DELEGATION.md, TEAM.md and AVAILABILITY.md, _shared/ and a team's
// files, a budget in tokens and one scaled to a context window, and a
// first run (no virtual files) are the same bytes locally, from a
// working tree, from a push and through MCP's system_prompt.
func TestServedTeamPromptEqualsLocalAssembly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newWorkTree(t, copyTree(t, "../prompt/testdata/teams"))
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ws, err := prompt.Open(os.DirFS(dir), prompt.Options{Seeds: templates.Seeds})
	if err != nil {
		t.Fatal(err)
	}
	fromDir := startDaemon(t, daemon.Options{Dir: dir})
	fromPush := startDaemon(t, daemon.Options{})
	fromPush.push(t, dir, "teams")
	cases := []api.PromptRequest{
		{Session: prompt.SessionMain, Channel: prompt.ChannelDM},
		{Session: prompt.SessionMain, Channel: prompt.ChannelGroup},
		{User: "new-guest"},
		{ContextWindow: 1000, ContextShare: 0.2},
		{Session: prompt.SessionSubagent},
	}
	for _, agent := range []string{"concierge", "night-porter", "tutor"} {
		a, err := ws.Agent(agent)
		if err != nil {
			t.Fatal(err)
		}
		set := skills.Load(1, skills.Options{WorkspaceDir: filepath.Join(dir, a.Dir)}.Sources())
		for i, c := range cases {
			want, err := ws.Assemble(prompt.Request{Agent: agent, User: c.User, Session: c.Session, Channel: c.Channel, Now: now,
				ContextWindow: c.ContextWindow, ContextShare: c.ContextShare,
				Skills: set.PromptSkills(skills.Request{Agent: agent, User: c.User, Allow: a.Config.Skills})})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && (len(want.Report.Virtual) == 0 || !strings.Contains(want.Prompt, "_shared/CULTURE.md")) {
				t.Fatalf("%s: no virtual or shared files to compare", agent)
			}
			c.Now = &now
			for name, td := range map[string]*testDaemon{"dir": fromDir, "push": fromPush} {
				var got api.PromptResponse
				waitFor(t, "the "+name+" daemon to serve "+agent, func() bool {
					got, err = td.c.Prompt(ctx, agent, c)
					return err == nil
				})
				if got.Prompt != want.Prompt || got.Report.InjectedTokens != want.Report.InjectedTokens {
					t.Errorf("%s daemon, %s %+v: served prompt differs from local assembly (%d vs %d bytes)", name, agent, c, len(got.Prompt), len(want.Prompt))
				}
			}
		}
	}
	// MCP's system_prompt is the daemon's prompt, with the clock's date.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", fromDir.c.Socket)
	}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "quire-test", Version: "0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: "http://quire/mcp?agent=concierge", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "system_prompt", Arguments: map[string]string{"context_window": "1000", "context_share": "0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := fromDir.c.Prompt(ctx, "concierge", api.PromptRequest{ContextWindow: 1000, ContextShare: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Messages[0].Content.(*sdk.TextContent).Text; text != want.Prompt || !strings.Contains(text, "<system_context name=\"TEAM.md\">") {
		t.Errorf("MCP system_prompt differs from the API's prompt (%d vs %d bytes)", len(text), len(want.Prompt))
	}
}
