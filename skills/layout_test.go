package skills

import (
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/workspace"
)

func problemCodes(ps []workspace.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code+" "+p.Path)
	}
	return out
}

// Skills as the ecosystem lays them out (issue 16, items 12 and 13): a name
// that differs from the directory, OpenClaw's grouped layout and a
// lower-case skill.md all load, each with the finding that says what to fix.
func TestEcosystemLayouts(t *testing.T) {
	ws := fstest.MapFS{
		"skills/pdf/SKILL.md":              {Data: []byte("---\nname: PDF Tools\ndescription: Convert PDFs to Markdown.\n---\n")},
		"skills/media/ffmpeg/SKILL.md":     {Data: []byte(skillMD("ffmpeg", "Cut and convert video with ffmpeg.", ""))},
		"skills/media/whisper/SKILL.md":    {Data: []byte(skillMD("whisper", "Transcribe audio.", ""))},
		"skills/media/README.md":           {Data: []byte("a group, not a skill\n")},
		"skills/notes/skill.md":            {Data: []byte(skillMD("notes", "Keep notes tidy.", ""))},
		"skills/other/ffmpeg/SKILL.md":     {Data: []byte(skillMD("ffmpeg", "A second ffmpeg.", ""))},
		"skills/empty/scripts/run.sh":      {Data: []byte("#!/bin/sh\n")},
		"skills/.hidden/x/SKILL.md":        {Data: []byte(skillMD("x", "hidden", ""))},
		"skills/deep/a/b/SKILL.md":         {Data: []byte(skillMD("b", "two levels down is not a group", ""))},
		".agents/skills/calendar/Skill.md": {Data: []byte(skillMD("calendar", "Plan meetings.", ""))},
	}
	set := Load(1, Options{Workspace: ws, WorkspaceDir: "/ws", NoBuiltin: true}.Sources())
	if got, want := slugs(set.Skills()), []string{"calendar", "ffmpeg", "notes", "pdf", "whisper"}; !slices.Equal(got, want) {
		t.Fatalf("skills = %v, want %v (problems %v)", got, want, set.Problems())
	}
	pdf, _ := set.Skill("pdf")
	if pdf.Name != "pdf" || pdf.Location != "skills/pdf/SKILL.md" {
		t.Errorf("pdf: name %q location %q; the directory must name the skill", pdf.Name, pdf.Location)
	}
	ff, _ := set.Skill("ffmpeg")
	if ff.Location != "skills/media/ffmpeg/SKILL.md" || ff.Dir != "/ws/skills/media/ffmpeg" || ff.Description != "Cut and convert video with ffmpeg." {
		t.Errorf("grouped skill: location %q dir %q description %q", ff.Location, ff.Dir, ff.Description)
	}
	notes, _ := set.Skill("notes")
	if notes.Location != "skills/notes/skill.md" || notes.Path != "skills/notes/skill.md" {
		t.Errorf("skill.md: location %q path %q", notes.Location, notes.Path)
	}
	wantProbs := []string{
		"skill-file-name .agents/skills/calendar/Skill.md",
		"skill-name-mismatch skills/pdf/SKILL.md",
		"skill-file-name skills/notes/skill.md",
		"skill-duplicate skills/other/ffmpeg/SKILL.md",
	}
	got := problemCodes(set.Problems())
	slices.Sort(got)
	slices.Sort(wantProbs)
	if !slices.Equal(got, wantProbs) {
		t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantProbs, "\n"))
	}
	for _, p := range set.Problems() {
		if p.Severity != workspace.SeverityWarning {
			t.Errorf("%v: want a warning: the skill loads", p)
		}
	}
	// The renamed skill is found by search and offered to the prompt
	// under its directory name.
	if hits := set.Search("convert pdfs markdown", Request{}, 1, nil); len(hits) != 1 || hits[0].Skill.Slug != "pdf" {
		t.Errorf("search hits = %v", hits)
	}
	var names []string
	for _, s := range set.PromptSkills(Request{}) {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "pdf") || !slices.Contains(names, "ffmpeg") {
		t.Errorf("prompt skills = %v", names)
	}
}

// A workspace silences unknown-key warnings in agent.yaml (issue 16,
// item 11); without the setting they stay, and known keys never warn.
func TestUnknownKeysCanBeSilenced(t *testing.T) {
	skill := "---\nname: pdf\ndescription: d\ntriggers: [pdf]\nhomepage: https://example.com\ncompatibility: poppler\n---\n"
	for _, tc := range []struct {
		agentYAML string
		want      int
	}{
		{"", 1},
		{"skill_unknown_keys: warn\n", 1},
		{"skill_unknown_keys: ignore\n", 0},
	} {
		ws := fstest.MapFS{"skills/pdf/SKILL.md": {Data: []byte(skill)}}
		if tc.agentYAML != "" {
			ws["agent.yaml"] = &fstest.MapFile{Data: []byte(tc.agentYAML)}
		}
		set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
		if n := len(set.Problems()); n != tc.want {
			t.Errorf("agent.yaml %q: %d problems %v, want %d", tc.agentYAML, n, set.Problems(), tc.want)
		}
		// The linter sees the same.
		repo := fstest.MapFS{}
		for k, v := range ws {
			repo["agents/bot/"+k] = v
		}
		n := 0
		for _, p := range CheckAgent(repo, "agents/bot") {
			if p.Code == codeUnknownKey {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("CheckAgent with agent.yaml %q: %d unknown-key problems, want %d", tc.agentYAML, n, tc.want)
		}
	}
}

// The built-in tier is read once per process; what Load gives is what
// reading the embedded files gives.
func TestBuiltinTierReadOnce(t *testing.T) {
	fresh, freshProbs := readTierFS(Source{Tier: TierBuiltin, FS: Builtin(), Prefix: "builtin"})
	for range 2 {
		got, probs := readTier(builtinSource())
		if len(got) != len(fresh) || len(got) == 0 || len(probs) != len(freshProbs) {
			t.Fatalf("built-in tier: %d skills %d problems, fresh %d %d", len(got), len(probs), len(fresh), len(freshProbs))
		}
		for i := range got {
			if !reflect.DeepEqual(*got[i], *fresh[i]) {
				t.Errorf("built-in %s differs from a fresh read", got[i].Slug)
			}
		}
	}
}

// The path shortcuts give what path.Join and filepath.Join give.
func TestPathShortcuts(t *testing.T) {
	for _, prefix := range []string{"", ".", "skills", "agents/bot/skills", "/home/a/.agents/skills", "./managed/", "/srv/x/../y", "/"} {
		for _, rel := range []string{"pdf", "group/pdf"} {
			if got, want := shownPath(prefix, rel, workspace.SkillFile), path.Join(prefix, rel, workspace.SkillFile); got != want {
				t.Errorf("shownPath(%q, %q) = %q, want %q", prefix, rel, got, want)
			}
			if got, want := diskFile(prefix, rel, workspace.SkillFile), filepath.Join(prefix, filepath.FromSlash(rel), workspace.SkillFile); got != want {
				t.Errorf("diskFile(%q, %q) = %q, want %q", prefix, rel, got, want)
			}
			if got, want := diskPath(prefix, rel), filepath.Join(prefix, filepath.FromSlash(rel)); got != want {
				t.Errorf("diskPath(%q, %q) = %q, want %q", prefix, rel, got, want)
			}
		}
	}
}
