package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quirehq/quire/skills"
)

// TestSameSkills: a reload that finds what is deployed keeps the
// deployment (and its cached prompts); any change to a skill does not.
func TestSameSkills(t *testing.T) {
	dir := t.TempDir()
	write := func(desc string) {
		if err := os.MkdirAll(filepath.Join(dir, "pdf"), 0o755); err != nil {
			t.Fatal(err)
		}
		body := "---\nname: pdf\ndescription: " + desc + "\n---\nUse pdftotext.\n"
		if err := os.WriteFile(filepath.Join(dir, "pdf", "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func(version uint64) *deployment {
		set := skills.Load(version, skills.Options{ManagedDir: dir}.Sources())
		if _, ok := set.Skill("pdf"); !ok {
			t.Fatalf("skills %v, problems %v", set.Skills(), set.Problems())
		}
		return &deployment{agents: map[string]*deployedAgent{"a": {skills: set}}}
	}
	write("Read PDF files.")
	a := load(1)
	write("Read PDF files.") // the same content written again
	if b := load(2); !sameSkills(a, b) {
		t.Error("the same skills on a reload count as a change")
	}
	write("Read and convert PDF files.")
	if b := load(3); sameSkills(a, b) {
		t.Error("a changed description is not a change")
	}
	if sameSkills(a, &deployment{agents: map[string]*deployedAgent{}}) {
		t.Error("an agent gone is not a change")
	}
}
