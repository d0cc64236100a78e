package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkCLI runs `quire check args…` and returns its exit code and what it
// printed on stdout and stderr.
func checkCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), append([]string{"check"}, args...), &env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: testEnv(t)})
	return code, out.String()
}

// checkTree writes files (slash path → content) under a new directory.
func checkTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCheckFlagsNearMissNames: `quire check` flags a misspelt AGENT.md as
// it flags Soul.md, and leaves a README alone.
func TestCheckFlagsNearMissNames(t *testing.T) {
	dir := checkTree(t, map[string]string{"agent.yaml": "name: bot\n", "AGENT.md": "# Agents\n", "Soul.md": "# Soul\n", "README.md": "# About\n"})
	_, out := checkCLI(t, dir)
	for _, want := range []string{"AGENT.md is not read", "rename it to AGENTS.md", "Soul.md is not read", "rename it to SOUL.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("quire check does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "README.md") {
		t.Errorf("quire check flags README.md:\n%s", out)
	}
}

// TestCheckWarnsNearBudget: `quire check` warns about a context file at
// 80 % of its per-file budget, before anything is cut, and not below.
func TestCheckWarnsNearBudget(t *testing.T) {
	dir := checkTree(t, map[string]string{
		"agent.yaml": "name: bot\nbudget:\n  per_file: 1000\n",
		"AGENTS.md":  strings.Repeat("a", 850) + "\n",
		"SOUL.md":    strings.Repeat("s", 700) + "\n",
	})
	_, out := checkCLI(t, dir)
	if !strings.Contains(out, "AGENTS.md is 851 chars, 85 % of the per-file budget of 1,000") {
		t.Errorf("quire check does not warn about AGENTS.md at 85 %% of its budget:\n%s", out)
	}
	if strings.Contains(out, "SOUL.md is") {
		t.Errorf("quire check warns about SOUL.md at 70 %%:\n%s", out)
	}
}
