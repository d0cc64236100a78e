package skills

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/prompt"
)

// UnknownAllowed: one warning per allow-list name that matches no skill,
// at the name, listing the known skills (the first twelve of many).
func TestUnknownAllowed(t *testing.T) {
	few := fstest.MapFS{"skills/pdf/SKILL.md": {Data: []byte("---\nname: pdf\ndescription: Read PDF files.\n---\nx\n")}}
	many := fstest.MapFS{}
	for i := range 12 {
		many[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("---\nname: s%02d\ndescription: Skill %d.\n---\nx\n", i, i))}
	}
	tests := []struct {
		name  string
		fsys  fstest.MapFS
		allow []string
		want  []string
	}{
		{"every skill", few, nil, nil},
		{"none", few, []string{}, nil},
		{"known", few, []string{"pdf", "durable-memory"}, nil},
		{"a case differs", few, []string{"PDF"},
			[]string{`agent.yaml:7:3: warning: skills: "PDF" matches no skill; known: daily-log-hygiene, durable-memory, pdf, skill-authoring`}},
		{"many known", many, []string{"s01", "s99"},
			[]string{`agent.yaml:8:3: warning: skills: "s99" matches no skill; known: daily-log-hygiene, durable-memory, s00, s01, s02, s03, s04, s05, s06, s07, s08, s09 and 3 more ('quire skills list' shows them)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &prompt.Agent{Name: "bot", Dir: ".", Config: prompt.DefaultConfig("bot")}
			a.Config.Skills = tc.allow
			for i := range tc.allow {
				a.Config.SkillsAt = append(a.Config.SkillsAt, prompt.Position{Line: 7 + i, Column: 3})
			}
			var got []string
			for _, p := range Load(0, WorkspaceSources(tc.fsys, a.Dir)).UnknownAllowed(a) {
				got = append(got, p.String())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
