package skills

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCheckShared(t *testing.T) {
	private := "---\nname: deploy\ndescription: Deploy to production.\nvisibility: private\n---\n"
	tests := []struct {
		name   string
		grants string
		skills map[string]string
		want   []string // path:line: severity: a word of the message
	}{
		{"good", "deploy:\n  agents: [ops]\n  repositories: [platform]\n", map[string]string{"deploy": private}, nil},
		{"no grants file, a private skill", "", map[string]string{"deploy": private},
			[]string{"skills/deploy/SKILL.md:0: warning: granted to nobody"}},
		{"malformed YAML", "deploy:\n  agents: [ops\n", map[string]string{"deploy": private},
			[]string{"skills/deploy/SKILL.md:0: warning: granted to nobody", "skills/grants.yaml:2: error: not valid YAML"}},
		{"unknown skill", "deploy:\n  agents: [ops]\ndeplyo:\n  agents: [ops]\n", map[string]string{"deploy": private},
			[]string{"skills/grants.yaml:3: error: does not hold (known: deploy)"}},
		{"unknown key", "deploy:\n  teams: [ops]\n", map[string]string{"deploy": private},
			[]string{"skills/deploy/SKILL.md:0: warning: granted to nobody", "skills/grants.yaml:2: error: use agents: or repositories:"}},
		{"not a list", "deploy:\n  agents: ops\n", map[string]string{"deploy": private},
			[]string{"skills/deploy/SKILL.md:0: warning: granted to nobody", "skills/grants.yaml:2: error: must be a list of names"}},
		{"top level not a mapping", "- deploy\n", map[string]string{"deploy": private},
			[]string{"skills/deploy/SKILL.md:0: warning: granted to nobody", "skills/grants.yaml:1: error: must be a mapping"}},
		{"grant of a public skill", "pub:\n  agents: [ops]\n", map[string]string{"pub": skillMD("pub", "Public.", "")},
			[]string{"skills/grants.yaml:1: warning: changes nothing"}},
		{"unknown visibility", "", map[string]string{"deploy": strings.Replace(private, "private", "secret", 1)},
			[]string{"skills/deploy/SKILL.md:4: error: visibility \"secret\" is unknown; use public, internal or private"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := CheckShared(sharedFS(tt.grants, tt.skills), "skills")
			if len(probs) != len(tt.want) {
				t.Fatalf("problems = %v, want %d: %v", probs, len(tt.want), tt.want)
			}
			for i, p := range probs {
				head, word, _ := strings.Cut(tt.want[i], ": ")
				sev, word, _ := strings.Cut(word, ": ")
				got := p.Path + ":" + itoa(p.Line)
				if got != head || string(p.Severity) != sev || !strings.Contains(p.Message, word) {
					t.Errorf("problem %d = %s:%d %s %q, want %s", i, p.Path, p.Line, p.Severity, p.Message, tt.want[i])
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSharedSourceGrants(t *testing.T) {
	src, entries, probs := SharedSource(sharedFS("deploy:\n  agents: [ops, release]\n  repositories: [platform]\n", nil), "skills")
	if len(probs) != 0 || len(entries) != 1 || entries[0].Line != 1 {
		t.Fatalf("entries %v, problems %v", entries, probs)
	}
	g := src.Grants["deploy"]
	if !src.Shared || !slices.Equal(g.Agents, []string{"ops", "release"}) || !slices.Equal(g.Repositories, []string{"platform"}) {
		t.Errorf("source %+v", src)
	}
}
