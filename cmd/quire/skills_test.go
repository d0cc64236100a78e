package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSkillsSharedRepository: `quire skills --shared-skills` applies the
// repository's visibility and grants as the daemon does (a private skill
// granted to alpha is listed, found and shown for alpha only; for beta
// showing it answers as for a missing skill), and search is hybrid with
// --embedder builtin.
func TestSkillsSharedRepository(t *testing.T) {
	getenv := testEnv(t)
	tmp := t.TempDir()
	shared, ws := filepath.Join(tmp, "shared"), filepath.Join(tmp, "ws")
	writeTree(t, shared, map[string]string{
		"deploy-prod/SKILL.md": "---\nname: deploy-prod\ndescription: Roll out services to the production servers.\nvisibility: private\n---\nRun the release script.\n",
		"grants.yaml":          "deploy-prod:\n  agents: [alpha]\n",
	})
	writeTree(t, ws, map[string]string{
		"agents/alpha/agent.yaml": "name: alpha\n", "agents/alpha/SOUL.md": "Calm.\n",
		"agents/beta/agent.yaml": "name: beta\n", "agents/beta/SOUL.md": "Calm.\n",
	})
	quire := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append(args, "--dir", ws, "--shared-skills", shared), &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: getenv})
		return code, out.String(), errOut.String()
	}
	for _, tc := range []struct {
		agent string
		sees  bool
	}{{"alpha", true}, {"beta", false}} {
		_, list, _ := quire("skills", "list", "--agent", tc.agent)
		_, found, _ := quire("skills", "search", "production", "--agent", tc.agent)
		code, body, errOut := quire("skills", "show", "deploy-prod", "--agent", tc.agent)
		if strings.Contains(list, "deploy-prod") != tc.sees || strings.Contains(found, "deploy-prod") != tc.sees ||
			strings.Contains(body, "release script") != tc.sees || (code == 0) != tc.sees {
			t.Errorf("%s: list %q, search %q, show %d %q %q", tc.agent, list, found, code, body, errOut)
		}
		if !tc.sees && !strings.Contains(errOut, `no skill "deploy-prod"`) {
			t.Errorf("%s: show of a hidden skill says %q, want the missing-skill message", tc.agent, errOut)
		}
	}
	// "deployment" is no word of the skill: BM25 finds nothing, the
	// builtin embedder's trigrams do.
	if code, out, _ := quire("skills", "search", "deployment", "--agent", "alpha"); code == 0 {
		t.Errorf("BM25 found %q", out)
	}
	if code, out, errOut := quire("skills", "search", "deployment", "--agent", "alpha", "--embedder", "builtin"); code != 0 || !strings.Contains(out, "deploy-prod") {
		t.Errorf("hybrid search: %d %q %q", code, out, errOut)
	}
	// A grants file that is not YAML stops the command, naming it.
	writeTree(t, shared, map[string]string{"grants.yaml": "deploy-prod: [alpha\n"})
	if code, _, errOut := quire("skills", "list", "--agent", "alpha"); code == 0 || !strings.Contains(errOut, "grants.yaml") {
		t.Errorf("bad grants: %d %q", code, errOut)
	}
	// skills check says what a push would be refused with.
	writeTree(t, shared, map[string]string{"grants.yaml": "deploy-prod:\n  agents: [alpha]\nnope:\n  agents: [beta]\n"})
	if code, out, _ := quire("skills", "check", shared); code != exitFindings || !strings.Contains(out, filepath.Join(shared, "grants.yaml")+":3") || !strings.Contains(out, `"nope"`) {
		t.Errorf("skills check: %d %q", code, out)
	}
	writeTree(t, shared, map[string]string{"grants.yaml": "deploy-prod:\n  agents: [alpha]\n"})
	if code, out, _ := quire("skills", "check", shared); code != 0 || out != "" {
		t.Errorf("skills check of a good repository: %d %q", code, out)
	}
}
