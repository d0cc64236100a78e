//go:build unix

package skills

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A workspace's skill that is a symbolic link to a file outside it is not
// read (its description would otherwise reach the prompt) and is reported;
// the user's own home tier may link, as os.DirFS does.
func TestWorkspaceSkillLinksNotFollowed(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte(skillMD("secret", "TOPSECRET", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, home := t.TempDir(), t.TempDir()
	for _, dir := range []string{
		filepath.Join(ws, "skills", "leak"),
		filepath.Join(ws, "skills", "plain"),
		filepath.Join(home, ".agents", "skills", "linked"),
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "skills", "plain", "SKILL.md"), []byte(skillMD("plain", "ordinary", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{
		filepath.Join(ws, "skills", "leak", "SKILL.md"),
		filepath.Join(home, ".agents", "skills", "linked", "SKILL.md"),
	} {
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
	}
	set := Load(1, Options{WorkspaceDir: ws, HomeDir: home, NoBuiltin: true}.Sources())
	var got []string
	for _, s := range set.Skills() {
		got = append(got, s.Slug+" "+s.Description)
	}
	if want := []string{"linked TOPSECRET", "plain ordinary"}; !slices.Equal(got, want) {
		t.Errorf("skills = %q, want %q", got, want)
	}
	reported := false
	for _, p := range set.Problems() {
		if strings.HasSuffix(p.Path, "skills/leak/SKILL.md") && strings.Contains(p.Message, "symbolic link") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("problems %v do not report skills/leak/SKILL.md as a symbolic link", set.Problems())
	}
}
