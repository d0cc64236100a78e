package gitsync

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

const noAgentMessage = "no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories (create one with 'quire init')"

// A tree with no agent is one error of Check, the answer `quire check`
// and the push validator share; a tree with one has no such error.
func TestCheckNoAgent(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // path|severity|code|message of the no-agent problem
	}{
		{"notes only", map[string]string{"README.md": "x\n", "MEMORY.md": "x\n"}, []string{"|error|no-agent|" + noAgentMessage}},
		{"a persona below the root", map[string]string{"bots/tutor/SOUL.md": "x\n"},
			[]string{"|error|no-agent|no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories; bots/tutor has SOUL.md but no agent.yaml: add one there to make it an agent"}},
		{"AGENTS.md at the root", map[string]string{"AGENTS.md": "# A\n"}, nil},
		{"an agent below", map[string]string{"README.md": "x\n", "bots/tutor/agent.yaml": "name: tutor\n"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for p, c := range tc.files {
				fsys[p] = &fstest.MapFile{Data: []byte(c)}
			}
			var got []string
			for _, p := range Check(context.Background(), fsys, CheckOptions{RootName: "ws"}) {
				if p.Code == CodeNoAgent || p.Code == workspace.CodeUnreadable {
					got = append(got, p.Path+"|"+string(p.Severity)+"|"+p.Code+"|"+p.Message)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The first push to a new repository (--allow-create) of a tree with no
// agent is refused, naming what is missing; nothing is stored.
func TestPushWithNoAgentIsRefused(t *testing.T) {
	_, url, dir := testHost(t, HostOptions{Validator: WorkspaceChecks(CheckOptions{})})
	work := newWorkRepo(t, map[string]string{"README.md": "notes\n"})
	out, err := gitTry(work, "push", url+"/ws.git", "main")
	if err == nil {
		t.Fatalf("a push with no agent was accepted:\n%s", out)
	}
	for _, want := range []string{"remote: error: main refused:", "remote: error:   " + noAgentMessage, "[remote rejected] main -> main (no agent here: "} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if _, err := gitTry(filepath.Join(dir, "ws.git"), "rev-parse", "--verify", "-q", "refs/heads/main"); err == nil {
		t.Error("the refused main exists on the server")
	}
	// With an agent the same repository takes it.
	writeFiles(t, work, map[string]string{"AGENTS.md": "# Rules\n"})
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "agent")
	if out, err := gitTry(work, "push", url+"/ws.git", "main"); err != nil {
		t.Fatalf("a push with AGENTS.md was refused: %v\n%s", err, out)
	}
}

// The names of an allow list are checked against the skills the agent
// has: its workspace's, the shared tiers' and the built-ins. A name that
// matches none is a warning at its line naming the known skills.
func TestCheckAllowList(t *testing.T) {
	shared := t.TempDir()
	writeFiles(t, shared, map[string]string{"team-pdf/SKILL.md": "---\nname: team-pdf\ndescription: Read PDF files.\n---\nUse pdftotext.\n"})
	const known = "known: daily-log-hygiene, durable-memory, mine, skill-authoring"
	tests := []struct {
		name   string
		allow  string // the agent.yaml line, "" for none
		shared bool   // the shared tier is given
		want   []string
	}{
		{"no allow list", "", false, nil},
		{"none allowed", "skills: []", false, nil},
		{"known names", "skills: [mine, durable-memory]", false, nil},
		{"an unknown name", "skills: [mine, memory-writing]", false,
			[]string{`bot/agent.yaml:2:16: warning: skills: "memory-writing" matches no skill; ` + known}},
		{"two unknown names on their lines", "skills:\n  - pdf\n  - Mine", false, []string{
			`bot/agent.yaml:3:5: warning: skills: "pdf" matches no skill; ` + known,
			`bot/agent.yaml:4:5: warning: skills: "Mine" matches no skill; ` + known}},
		{"a shared skill, the tier unknown", "skills: [team-pdf]", false,
			[]string{`bot/agent.yaml:2:10: warning: skills: "team-pdf" matches no skill; ` + known}},
		{"a shared skill", "skills: [team-pdf]", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"bot/agent.yaml":           {Data: []byte("name: bot\n" + tc.allow + "\n")},
				"bot/AGENTS.md":            {Data: []byte("# Rules\n")},
				"bot/skills/mine/SKILL.md": {Data: []byte("---\nname: mine\ndescription: Mine.\n---\nDo it.\n")},
			}
			opts := CheckOptions{}
			if tc.shared {
				opts.SharedSkills = skills.Options{ManagedDir: shared, NoBuiltin: true}.Sources()
			}
			var got []string
			for _, p := range Check(context.Background(), fsys, opts) {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The allow list the agent.yaml template suggests, uncommented, names
// skills a new agent has: no warning, and the agent keeps skills.
func TestTemplateAllowListNamesRealSkills(t *testing.T) {
	dir := t.TempDir()
	if _, err := templates.Seed(dir, templates.AgentFiles("bot", prompt.TypePredefined)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, workspace.ConfigFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	uncommented := 0
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "# skills:"); ok {
			lines[i] = "skills:" + rest
			uncommented++
		}
	}
	if uncommented != 1 {
		t.Fatalf("the template has %d commented skills: lines, want 1:\n%s", uncommented, data)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := workspace.DirFS(dir)
	if probs := Check(context.Background(), fsys, CheckOptions{}); len(probs) > 0 {
		t.Fatalf("the template's allow list draws problems: %v", probs)
	}
	ws, err := prompt.Open(fsys, prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ws.Agent("")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Config.Skills) == 0 {
		t.Fatalf("the uncommented line allows nothing: %q", a.Config.Skills)
	}
	set := skills.Load(1, skills.WorkspaceSources(fsys, a.Dir), nil)
	kept := set.List(skills.Request{Agent: a.Name, Allow: a.Config.Skills})
	if len(kept) != len(a.Config.Skills) {
		t.Fatalf("the allow list %q keeps %d skills", a.Config.Skills, len(kept))
	}
}
