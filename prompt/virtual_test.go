package prompt

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/workspace"
)

// openAgents opens a repository of agents: each entry of yamls is an
// agents/<name>/agent.yaml, each of files a path from the root.
func openAgents(t testing.TB, yamls map[string]string, files map[string]string) *Workspace {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, y := range yamls {
		fsys["agents/"+name+"/"+workspace.ConfigFile] = &fstest.MapFile{Data: []byte(y)}
		fsys["agents/"+name+"/"+workspace.SoulFile] = &fstest.MapFile{Data: []byte("I am " + name + ".\n")}
	}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
	}
	w, err := Open(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func virtualOf(t *testing.T, res Result, name string) string {
	t.Helper()
	open := "<system_context name=\"" + name + "\">\n"
	i := strings.Index(res.Prompt, open)
	if i < 0 {
		return ""
	}
	rest := res.Prompt[i+len(open):]
	return rest[:strings.Index(rest, "</system_context>")]
}

// TestDelegationInlineLimit: up to 15 targets DELEGATION.md gives each a
// section (description, when, team, availability); from 16 on, one line
// each with the description only.
func TestDelegationInlineLimit(t *testing.T) {
	for _, n := range []int{MaxInlineDelegation, MaxInlineDelegation + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			yamls := map[string]string{}
			var list []string
			for i := range n {
				name := fmt.Sprintf("t%02d", i)
				yamls[name] = fmt.Sprintf("description: does task %d\nteam: crew\navailability: weekdays\n", i)
				list = append(list, fmt.Sprintf("{agent: %s, when: task %d comes up}", name, i))
			}
			yamls["boss"] = "delegation: [" + strings.Join(list, ", ") + "]\n"
			w := openAgents(t, yamls, nil)
			d := virtualOf(t, assemble(t, w, Request{Agent: "boss"}), workspace.DelegationFile)
			full := strings.Count(d, "\n## ")
			lines := strings.Count(d, "\n- t")
			if n <= MaxInlineDelegation && (full != n || lines != 0 || !strings.Contains(d, "Delegate when: task 3 comes up\nTeam: crew\nAvailability: weekdays\n")) {
				t.Fatalf("%d targets: want %d inline sections:\n%s", n, n, d)
			}
			if n > MaxInlineDelegation && (full != 0 || lines != n || strings.Contains(d, "Delegate when") || !strings.Contains(d, "- t03: does task 3\n")) {
				t.Fatalf("%d targets: want %d description-only lines:\n%s", n, n, d)
			}
		})
	}
}

// TestVirtualFilesRules: derived files are not charged to the budget,
// rendered only in main sessions, skipped on a first run, replaced by a
// caller's file of the same name, and absent links leave the negative
// context in AVAILABILITY.md.
func TestVirtualFilesRules(t *testing.T) {
	w := openAgents(t, map[string]string{
		"a":    "team: crew\ndelegation: [b]\n",
		"b":    "team: {name: crew, role: second}\ndescription: the second one\n",
		"solo": "",
	}, map[string]string{"agents/a/users/new/" + workspace.BootstrapFile: "Welcome.\n"})
	res := assemble(t, w, Request{Agent: "a"})
	if strings.Join(res.Report.Virtual, ",") != "DELEGATION.md,TEAM.md,AVAILABILITY.md" {
		t.Fatalf("virtual files %v", res.Report.Virtual)
	}
	if f, _ := res.Report.File(workspace.SoulFile); res.Report.InjectedChars != f.InjectedChars {
		t.Fatalf("the virtual files were charged to the budget: %d injected, SOUL.md is %d", res.Report.InjectedChars, f.InjectedChars)
	}
	if team := virtualOf(t, res, workspace.TeamFile); !strings.Contains(team, "- b (second): the second one\n") {
		t.Fatalf("TEAM.md does not name the teammate:\n%s", team)
	}
	if av := virtualOf(t, res, workspace.AvailabilityFile); strings.Contains(av, "NOT available") {
		t.Fatalf("an agent with a team and a target has no negative context:\n%s", av)
	}
	if av := virtualOf(t, assemble(t, w, Request{Agent: "solo"}), workspace.AvailabilityFile); !strings.Contains(av, "These are NOT available to you:\n- Delegation") || !strings.Contains(av, "- A team") {
		t.Fatalf("solo's AVAILABILITY.md lacks the negative context:\n%s", av)
	}
	for _, req := range []Request{{Agent: "a", Session: SessionSubagent}, {Agent: "a", Session: SessionCron}, {Agent: "a", User: "new"}} {
		if res := assemble(t, w, req); len(res.Report.Virtual) != 0 || strings.Contains(res.Prompt, "<system_context") {
			t.Errorf("%+v: virtual files rendered: %v", req, res.Report.Virtual)
		}
	}
	res = assemble(t, w, Request{Agent: "a", VirtualFiles: []VirtualFile{{Name: workspace.TeamFile, Content: "given"}, {Name: "EXTRA.md", Content: "x"}}})
	if strings.Join(res.Report.Virtual, ",") != "DELEGATION.md,AVAILABILITY.md,TEAM.md,EXTRA.md" || virtualOf(t, res, workspace.TeamFile) != "given\n" {
		t.Fatalf("caller's files: %v\n%s", res.Report.Virtual, res.Prompt)
	}
}

// TestDelegationProblems: a target that is no agent of the repository,
// or the agent itself, is an error on agent.yaml's line.
func TestDelegationProblems(t *testing.T) {
	w := openAgents(t, map[string]string{"a": "name: a\ndelegation:\n  - b\n  - ghost\n  - a\n", "b": ""}, nil)
	var got []string
	for _, p := range w.Check() {
		got = append(got, p.String())
	}
	want := []string{
		`agents/a/agent.yaml:4:5: error: delegation: "ghost" is not an agent of this repository; its agents are a, b`,
		`agents/a/agent.yaml:5:5: error: delegation: "a" is this agent itself; list other agents`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	a, _ := w.Agent("a")
	if len(a.Problems) != 2 {
		t.Fatalf("the agent's own problems (the editor's) miss them: %v", a.Problems)
	}
	if d := virtualOf(t, assemble(t, w, Request{Agent: "a"}), workspace.DelegationFile); !strings.Contains(d, "## b") || strings.Contains(d, "ghost") || strings.Contains(d, "## a") {
		t.Fatalf("DELEGATION.md lists bad targets:\n%s", d)
	}
}

// TestSharedFiles: _shared/*.md reach every agent's main sessions after
// its own files, charged to its budget (a small total drops them and
// says which files used it up); team files reach members only.
func TestSharedFiles(t *testing.T) {
	files := map[string]string{
		workspace.SharedDir + "/" + workspace.CultureFile:      strings.Repeat("c", 100) + "\n",
		workspace.SharedDir + "/zz.md":                         "last\n",
		workspace.SharedDir + "/skip.txt":                      "not markdown\n",
		workspace.TeamDir("crew") + "/" + workspace.SoulFile:   "team soul\n",
		workspace.TeamDir("crew") + "/" + workspace.MemoryFile: "team memory\n",
		workspace.TeamDir("other") + "/" + workspace.SoulFile:  "other team\n",
		"agents/tight/" + workspace.AgentsFile:                 strings.Repeat("a", 150) + "\n",
	}
	w := openAgents(t, map[string]string{"member": "team: crew\n", "loner": "", "tight": "budget: {total: 220, min_file: 64}\n"}, files)
	names := func(res Result) []string {
		var out []string
		for _, f := range res.Report.Files {
			if f.Status != StatusMissing {
				out = append(out, f.Name)
			}
		}
		return out
	}
	cases := []struct {
		req  Request
		want string
	}{
		{Request{Agent: "member"}, "SOUL.md,_shared/teams/crew/SOUL.md,_shared/teams/crew/MEMORY.md,_shared/CULTURE.md,_shared/zz.md"},
		{Request{Agent: "member", Channel: ChannelGroup}, "SOUL.md,_shared/teams/crew/SOUL.md,_shared/CULTURE.md,_shared/zz.md"},
		{Request{Agent: "member", Session: SessionSubagent}, ""},
		{Request{Agent: "loner"}, "SOUL.md,_shared/CULTURE.md,_shared/zz.md"},
	}
	for _, c := range cases {
		if got := strings.Join(names(assemble(t, w, c.req)), ","); got != c.want {
			t.Errorf("%+v: files %s, want %s", c.req, got, c.want)
		}
	}
	res := assemble(t, w, Request{Agent: "tight"})
	culture, _ := res.Report.File(workspace.SharedDir + "/" + workspace.CultureFile)
	if culture.Status != StatusDropped || strings.Join(culture.UsedBy, ",") != "AGENTS.md,SOUL.md" || culture.Path != "_shared/CULTURE.md" {
		t.Fatalf("a total used up by the agent's own files: CULTURE.md is %+v", culture)
	}
}

// TestTeamDirectoryProblems: a team directory nobody belongs to, and a
// team name with no directory beside others, are warnings.
func TestTeamDirectoryProblems(t *testing.T) {
	w := openAgents(t, map[string]string{"a": "team: front_desk\n", "b": "team: crew\n"}, map[string]string{
		workspace.TeamDir("front-desk") + "/" + workspace.SoulFile: "x\n",
		workspace.TeamDir("crew") + "/" + workspace.SoulFile:       "y\n",
	})
	var got []string
	for _, p := range w.Problems() {
		got = append(got, p.String())
	}
	want := []string{
		`agents/a/agent.yaml: warning: team "front_desk" has no directory _shared/teams/front_desk/: its members get no team files (the team directories are crew, front-desk)`,
		`_shared/teams/front-desk/SOUL.md: warning: no agent belongs to team "front-desk": its files reach no prompt (add team: front-desk to an agent.yaml)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
