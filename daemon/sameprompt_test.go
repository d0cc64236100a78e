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
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
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

	ws, err := prompt.Open(os.DirFS(dir), prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	local := func(agent, user string, session prompt.Session, channel prompt.Channel) string {
		a, err := ws.Agent(agent)
		if err != nil {
			t.Fatal(err)
		}
		set := skills.Load(1, skills.Options{WorkspaceDir: filepath.Join(dir, a.Dir)}.Sources(), nil)
		res, err := ws.Assemble(prompt.Request{Agent: agent, User: user, Session: session, Channel: channel, Now: now,
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
	}{
		{"concierge", "ines.carvalho", prompt.SessionMain, prompt.ChannelDM},
		{"concierge", "tg-5512093311", prompt.SessionMain, prompt.ChannelGroup},
		{"studybuddy", "alice", prompt.SessionMain, prompt.ChannelDM},
		{"studybuddy", "bob@example.com", prompt.SessionCron, prompt.ChannelDM},
	}
	for _, c := range cases {
		want := local(c.agent, c.user, c.session, c.channel)
		for name, td := range map[string]*testDaemon{"dir": fromDir, "push": fromPush} {
			var got api.PromptResponse
			waitFor(t, "the "+name+" daemon to serve "+c.agent, func() bool {
				got, err = td.c.Prompt(ctx, c.agent, api.PromptRequest{User: c.user, Session: c.session, Channel: c.channel, Now: &now})
				return err == nil
			})
			if got.Prompt != want {
				t.Errorf("%s daemon, %s/%s/%s/%s: served prompt differs from local assembly (%d vs %d bytes)",
					name, c.agent, c.user, c.session, c.channel, len(got.Prompt), len(want))
			}
		}
	}
}

// TestSharedSkillTiers: the managed skills directory and ~/.agents/skills
// reach every agent's prompt, and a skill added there is served after the
// watcher's debounce, without a push.
func TestSharedSkillTiers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	managed, home := t.TempDir(), t.TempDir()
	writeFiles(t, managed, map[string]string{"team-etiquette/SKILL.md": "---\nname: team-etiquette\ndescription: How the team writes to guests.\n---\nBe kind.\n"})
	dir := t.TempDir()
	writeFiles(t, dir, botFiles)
	td := startDaemon(t, daemon.Options{Dir: dir, SkillsDir: managed, HomeDir: home})
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Prompt, "<name>team-etiquette</name>") || !strings.Contains(p.Prompt, "<location>managed/team-etiquette/SKILL.md</location>") {
		t.Fatalf("the managed skill is not in the prompt")
	}
	writeFiles(t, home, map[string]string{".agents/skills/my-shortcuts/SKILL.md": "---\nname: my-shortcuts\ndescription: The operator's own shortcuts.\n---\nUse them.\n"})
	waitFor(t, "a skill added to ~/.agents/skills to be served", func() bool {
		p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "<name>my-shortcuts</name>")
	})
}
