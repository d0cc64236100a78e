package testenv

import (
	"maps"
	"strings"
	"testing"
)

// A tree written, committed and read back is the same tree, committed
// on main by the fixed identity.
func TestWorkTreeRoundTrip(t *testing.T) {
	files := map[string]string{"AGENTS.md": "# Agents\n", "memory/2020-01-01.md": "a day\n", "skills/x/SKILL.md": "---\nname: x\n---\n"}
	dir := NewWorkTree(t, files, "first")
	if got := Git(t, dir, "log", "-1", "--format=%s %an <%ae>"); got != "first Test <test@example.com>" {
		t.Errorf("last commit: %q", got)
	}
	if got := Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Errorf("branch %q, want main", got)
	}
	back := ReadTree(t, dir)
	maps.DeleteFunc(back, func(p, _ string) bool { return strings.HasPrefix(p, ".git/") })
	if !maps.Equal(back, files) {
		t.Errorf("read back %v, want %v", back, files)
	}
	if _, err := GitTry(dir, "no-such-command"); err == nil {
		t.Error("GitTry of an unknown command did not fail")
	}
}
