package daemon

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// deployedWith builds a deployment of one agent, bot, whose agent.yaml
// has the allow list line allow ("" for none), with one workspace skill
// (pdf) besides the built-ins.
func deployedWith(t *testing.T, allow string) *deployment {
	t.Helper()
	fsys := fstest.MapFS{
		"bot/agent.yaml":          {Data: []byte("name: bot\n" + allow + "\n")},
		"bot/AGENTS.md":           {Data: []byte("# Rules\n")},
		"bot/skills/pdf/SKILL.md": {Data: []byte("---\nname: pdf\ndescription: Read PDF files.\n---\nUse pdftotext.\n")},
	}
	ws, err := prompt.Open(fsys, prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dep := &deployment{commit: strings.Repeat("c", 40), fsys: fsys, base: fsys, ws: ws, agents: map[string]*deployedAgent{}}
	for _, a := range ws.Agents() {
		dep.agents[a.Name] = &deployedAgent{agent: a, skills: skills.Load(1, skills.WorkspaceSources(fsys, a.Dir))}
		dep.names = append(dep.names, a.Name)
	}
	return dep
}

// The deploy report's skills line lists only the skills the agent may
// use (its allow list), and an allow-list name that matches no skill is
// a warning there as in `quire check`.
func TestDeployReportSkills(t *testing.T) {
	none := "none" // no previous deployment
	tests := []struct {
		name        string
		prev, allow string
		want        []string // the report's skills and warning lines
	}{
		{"first deploy, every skill", none, "", []string{"bot: skills added daily-log-hygiene, durable-memory, pdf, skill-authoring"}},
		{"first deploy, an allow list", none, "skills: [pdf, durable-memory]", []string{"bot: skills added durable-memory, pdf"}},
		{"first deploy, none allowed", none, "skills: []", nil},
		{"the allow list narrows", "", "skills: [pdf]", []string{"bot: skills removed daily-log-hygiene, durable-memory, skill-authoring"}},
		{"the allow list widens", "skills: [pdf]", "skills: [pdf, skill-authoring]", []string{"bot: skills added skill-authoring"}},
		{"an unknown name", "skills: [pdf]", "skills: [pdf, memory-writing]",
			[]string{`bot: bot/agent.yaml:2:15: warning: skills: "memory-writing" matches no skill; known: daily-log-hygiene, durable-memory, pdf, skill-authoring`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var prev *deployment
			if tc.prev != none {
				prev = deployedWith(t, tc.prev)
			}
			var buf bytes.Buffer
			writeDeployReport(&buf, prev, deployedWith(t, tc.allow), time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC))
			var got []string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.HasPrefix(l, "bot: skills ") || strings.Contains(l, "warning") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("report lines\n got %q\nwant %q\nreport:\n%s", got, tc.want, buf.String())
			}
		})
	}
}
