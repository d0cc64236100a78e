package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runQuire(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
	return out.String(), errOut.String(), code
}

func TestSkillsCommand(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	files := map[string]string{
		filepath.Join(dir, "agent.yaml"):                     "name: bot\n",
		filepath.Join(dir, "skills/pdf/SKILL.md"):            "---\nname: pdf\ndescription: Convert PDF files to Markdown.\n---\nRun {baseDir}/convert.sh\n",
		filepath.Join(dir, "skills/bad/SKILL.md"):            "---\nname: wrong\ndescription: d\n---\n",
		filepath.Join(home, ".agents/skills/pdf/SKILL.md"):   "---\nname: pdf\ndescription: Home copy.\n---\n",
		filepath.Join(dir, ".agents/skills/charts/SKILL.md"): "---\nname: charts\ndescription: Draw charts.\n---\n",
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := runQuire(t, "skills", "list", "--dir", dir, "--home", home)
	for _, want := range []string{"pdf ", "workspace ", "charts", "workspace-agents", "shadowed: " + filepath.Join(home, ".agents/skills/pdf/SKILL.md") + " (home) is shadowed by skills/pdf/SKILL.md (workspace)", `skills/bad/SKILL.md:2: error: name "wrong" differs`} {
		if !strings.Contains(out, want) {
			t.Errorf("skills list lacks %q (code %d, stderr %q):\n%s", want, code, stderr, out)
		}
	}
	out, _, code = runQuire(t, "skills", "search", "convert pdf", "--dir", dir, "--json")
	if code != 0 || !strings.Contains(out, `"slug": "pdf"`) || !strings.Contains(out, `"tier": "workspace"`) {
		t.Errorf("skills search (code %d):\n%s", code, out)
	}
	out, _, code = runQuire(t, "skills", "--dir", dir, "show", "pdf")
	if abs, _ := filepath.Abs(dir); code != 0 || out != "Run "+filepath.Join(abs, "skills/pdf")+"/convert.sh\n" {
		t.Errorf("skills show (code %d): %q", code, out)
	}
	if _, stderr, code := runQuire(t, "skills", "--dir", dir, "show", "nope"); code != 1 || !strings.Contains(stderr, `no skill "nope"`) {
		t.Errorf("show of a missing skill: code %d, %q", code, stderr)
	}
	if _, _, code := runQuire(t, "skills", "--dir", dir, "frobnicate"); code != 2 {
		t.Errorf("unknown subcommand exit code %d, want 2", code)
	}
	out, _, code = runQuire(t, "check", dir)
	if code != 1 || !strings.Contains(out, `skills/bad/SKILL.md:2: error: name "wrong" differs from its directory "bad"`) {
		t.Errorf("check (code %d):\n%s", code, out)
	}
}
