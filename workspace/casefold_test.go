package workspace

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

// TestCaseCollisions: names in one directory that differ only in case are
// errors naming both paths and why, in a check of the whole tree and in
// one of the changed paths (the push), which finds a new name colliding
// with one already there.
func TestCaseCollisions(t *testing.T) {
	tree := fstest.MapFS{
		"SOUL.md":              {Data: []byte("calm\n")},
		"soul.md":              {Data: []byte("loud\n")},
		"AGENTS.md":            {Data: []byte("rules\n")},
		"skills/PDF/SKILL.md":  {Data: []byte("---\nname: pdf\n---\n")},
		"skills/pdf/SKILL.md":  {Data: []byte("---\nname: pdf\n---\n")},
		"skills/Pdf/SKILL.md":  {Data: []byte("---\nname: pdf\n---\n")},
		"skills/docx/SKILL.md": {Data: []byte("---\nname: docx\n---\n")},
		"memory/Ação.md":       {Data: []byte("- a\n")},
		"memory/AÇÃO.md":       {Data: []byte("- b\n")},
	}
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string // "path: the other path"
	}{
		{"whole tree", nil, []string{
			"memory/Ação.md: memory/AÇÃO.md",
			"skills/Pdf: skills/PDF",
			"skills/pdf: skills/PDF",
			"soul.md: SOUL.md",
		}},
		{"a new name beside an old one", []string{"soul.md"}, []string{"soul.md: SOUL.md"}},
		{"the old name changed", []string{"SOUL.md"}, []string{"soul.md: SOUL.md"}},
		{"a file in a colliding directory", []string{"skills/pdf/SKILL.md"}, []string{"skills/Pdf: skills/PDF", "skills/pdf: skills/PDF"}},
		{"many names in one directory", []string{"AGENTS.md", "a.md", "b.md", "c.md", "soul.md", "memory/x.md"}, []string{"soul.md: SOUL.md"}},
		{"no collision on the way", []string{"AGENTS.md", "skills/docx/SKILL.md"}, nil},
		{"a deleted path", []string{"gone/x.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range CheckFiles(context.Background(), tree, tc.paths) {
				if p.Code != CodeCaseCollision {
					continue
				}
				if p.Severity != SeverityError || !strings.Contains(p.Message, "differ only in case") || !strings.Contains(p.Message, "macOS or Windows") {
					t.Errorf("%s: %v %q", p.Path, p.Severity, p.Message)
				}
				other, _, _ := strings.Cut(p.Message, " and ")
				got = append(got, p.Path+": "+other)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("case collisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
