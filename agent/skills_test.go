package agent_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// The skill set of an agent in a subdirectory: its own tiers (named from
// the tree's root), the shared tiers and the built-ins, and not another
// agent's skills. {baseDir} is the skill's directory on disk when the tree
// is on disk, its path in the tree when it is not (a commit). A tree read
// through workspace.Dir (from the disk directly) loads what another
// fs.FS over the same files does.
func TestSkills(t *testing.T) {
	root, managed := t.TempDir(), t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{
		"ada/agent.yaml":                  "name: ada\n",
		"ada/skills/pdf/SKILL.md":         "---\nname: pdf\ndescription: Read PDFs.\n---\nRun {baseDir}/x.sh\n",
		"ada/.agents/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Older.\n---\nx\n",
		"bob/agent.yaml":                  "name: bob\n",
		"bob/skills/bobs/SKILL.md":        "---\nname: bobs\ndescription: Bob's.\n---\nx\n",
	})
	testenv.WriteFiles(t, managed, map[string]string{"team/SKILL.md": "---\nname: team\ndescription: Shared.\n---\nx\n"})
	tests := []struct {
		name string
		fsys fs.FS
		dir  string // SkillOptions.Dir
		base string // pdf's {baseDir}
	}{
		{"workspace.Dir", workspace.DirFS(root), root, filepath.Join(root, "ada", "skills", "pdf")},
		{"os.DirFS", os.DirFS(root), root, filepath.Join(root, "ada", "skills", "pdf")},
		{"not on disk", os.DirFS(root), "", "ada/skills/pdf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := prompt.Open(tc.fsys, prompt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := ws.Agent("ada")
			if err != nil {
				t.Fatal(err)
			}
			set := agent.Skills(tc.fsys, a, agent.SkillOptions{Shared: agent.SharedSkills("", managed), Dir: tc.dir, Version: 7})
			var slugs []string
			for _, sk := range set.Skills() {
				slugs = append(slugs, sk.Slug)
			}
			if want := []string{"daily-log-hygiene", "durable-memory", "pdf", "skill-authoring", "team"}; !slices.Equal(slugs, want) {
				t.Errorf("skills %q, want %q", slugs, want)
			}
			if set.Version() != 7 {
				t.Errorf("version %d, want 7", set.Version())
			}
			pdf, _ := set.Skill("pdf")
			if pdf.Path != "ada/skills/pdf/SKILL.md" || pdf.Location != "skills/pdf/SKILL.md" || pdf.Dir != tc.base {
				t.Errorf("pdf: path %q, location %q, dir %q; want ada/skills/pdf/SKILL.md, skills/pdf/SKILL.md, %s", pdf.Path, pdf.Location, pdf.Dir, tc.base)
			}
			if sh := set.Shadows(); len(sh) != 1 || sh[0].Shadowed != "ada/.agents/skills/pdf/SKILL.md" {
				t.Errorf("shadows %v, want .agents/skills/pdf under ada", sh)
			}
		})
	}
}
