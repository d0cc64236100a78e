package agent_test

import (
	"context"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

const noAgentMessage = "no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories (create one with 'quire init')"

// Check's file rules, on a working tree: each refused file is named with
// its reason, whether or not a prompt reads it, and nothing else is said
// about it.
func TestCheckFileRules(t *testing.T) {
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{
		"agent.yaml":           "name: a\n",
		"AGENTS.md":            "# A\n",
		"TOOLS.md":             "caf\xe9\n",
		"memory/2026-01-01.md": strings.Repeat("a long day\n", 110_000),
		"data.bin":             strings.Repeat("\xff", 2<<20),
	})
	for name, target := range map[string]string{"SOUL.md": "/etc/passwd", "notes.txt": "AGENTS.md", "linked": "memory"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := makeFIFO(filepath.Join(root, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range agent.Check(context.Background(), workspace.DirFS(root), agent.CheckOptions{}) {
		if p.Severity == workspace.SeverityError {
			if prev, ok := got[p.Path]; ok {
				t.Errorf("%s: two errors: %s and %s", p.Path, prev, p.Code)
			}
			got[p.Path] = p.Code
		}
	}
	want := map[string]string{
		"SOUL.md": "symlink", "notes.txt": "symlink", "linked": "symlink", "MEMORY.md": "special-file",
		"TOOLS.md": "invalid-utf8", "memory/2026-01-01.md": "file-too-large", "data.bin": "file-too-large",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("errors by file:\n got %v\nwant %v", got, want)
	}
}

// A committed link is not read as its target path: checked on a commit,
// a linked agent.yaml is refused as a link, like in the working tree, and
// not parsed as YAML.
func TestCheckCommittedLink(t *testing.T) {
	work := testenv.NewWorkTree(t, map[string]string{"real.yaml": "name: a\n", "AGENTS.md": "# A\n"}, "first")
	if err := os.Symlink("real.yaml", filepath.Join(work, "agent.yaml")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, work, "add", "-A")
	testenv.Git(t, work, "commit", "-q", "-m", "link")
	repo, err := gitsync.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, p := range workspace.Errors(agent.Check(context.Background(), snap, agent.CheckOptions{})) {
		codes = append(codes, p.Path+"|"+p.Code)
	}
	if !slices.Equal(codes, []string{"agent.yaml|symlink"}) {
		t.Fatalf("errors: %q", codes)
	}
}

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
			var got []string
			for _, p := range agent.Check(context.Background(), mapFS(tc.files), agent.CheckOptions{RootName: "ws"}) {
				if p.Code == agent.CodeNoAgent || p.Code == workspace.CodeUnreadable {
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
	dir := t.TempDir()
	h, err := gitsync.NewHost(dir, gitsync.HostOptions{AllowCreate: true, Validator: gitsync.TreeValidator(agent.WorkspaceChecks(agent.CheckOptions{}))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	work := testenv.NewWorkTree(t, map[string]string{"README.md": "notes\n"}, "first")
	out, err := testenv.GitTry(work, "push", srv.URL+"/ws.git", "main")
	if err == nil {
		t.Fatalf("a push with no agent was accepted:\n%s", out)
	}
	for _, want := range []string{"remote: error: main refused:", "remote: error:   " + noAgentMessage, "[remote rejected] main -> main (no agent here: "} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if _, err := testenv.GitTry(filepath.Join(dir, "ws.git"), "rev-parse", "--verify", "-q", "refs/heads/main"); err == nil {
		t.Error("the refused main exists on the server")
	}
	// With an agent the same repository takes it.
	testenv.WriteFiles(t, work, map[string]string{"AGENTS.md": "# Rules\n"})
	testenv.Git(t, work, "add", "-A")
	testenv.Git(t, work, "commit", "-q", "-m", "agent")
	if out, err := testenv.GitTry(work, "push", srv.URL+"/ws.git", "main"); err != nil {
		t.Fatalf("a push with AGENTS.md was refused: %v\n%s", err, out)
	}
}

// The content checks apply to the branches a daemon deploys, not to a
// tag or a proposal branch, which get the file rules alone.
func TestWorkspaceChecksByRef(t *testing.T) {
	tree := mapFS(map[string]string{"README.md": "notes\n"}) // no agent
	check := agent.WorkspaceChecks(agent.CheckOptions{})
	for ref, refused := range map[string]bool{
		"refs/heads/main": true, "refs/heads/live": true, "refs/heads/proposals": true,
		"refs/heads/proposals/bot/1": false, "refs/tags/v1": false, "refs/notes/commits": false,
	} {
		got := check(context.Background(), ref, tree, []string{"README.md"})
		if (len(got) > 0) != refused {
			t.Errorf("%s: problems %v, want refused=%v", ref, got, refused)
		}
	}
}

// The names of an allow list are checked against the skills the agent
// has: its workspace's, the shared tiers' and the built-ins. A name that
// matches none is a warning at its line naming the known skills.
func TestCheckAllowList(t *testing.T) {
	shared := t.TempDir()
	testenv.WriteFiles(t, shared, map[string]string{"team-pdf/SKILL.md": "---\nname: team-pdf\ndescription: Read PDF files.\n---\nUse pdftotext.\n"})
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
			fsys := mapFS(map[string]string{
				"bot/agent.yaml":           "name: bot\n" + tc.allow + "\n",
				"bot/AGENTS.md":            "# Rules\n",
				"bot/skills/mine/SKILL.md": "---\nname: mine\ndescription: Mine.\n---\nDo it.\n",
			})
			opts := agent.CheckOptions{}
			if tc.shared {
				opts.SharedSkills = skills.Options{ManagedDir: shared, NoBuiltin: true}.Sources()
			}
			var got []string
			for _, p := range agent.Check(context.Background(), fsys, opts) {
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
	if probs := agent.Check(context.Background(), fsys, agent.CheckOptions{}); len(probs) > 0 {
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
	kept := agent.Skills(fsys, a, agent.SkillOptions{}).List(skills.Request{Agent: a.Name, Allow: a.Config.Skills})
	if len(kept) != len(a.Config.Skills) {
		t.Fatalf("the allow list %q keeps %d skills", a.Config.Skills, len(kept))
	}
}

// mapFS is an in-memory tree of files (slash path → content).
func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return fsys
}
