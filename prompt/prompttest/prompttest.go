// Package prompttest holds what the tests and benchmarks of several
// packages share about workspaces: the generated workspace the issue's
// benchmarks measure.
package prompttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Skills is how many skills Workspace writes.
const Skills = 20

// Workspace writes the generated workspace of the benchmarks into dir: a
// root agent without agent.yaml holding AGENTS.md (6.3K), SOUL.md (25K),
// small TOOLS, IDENTITY, USER, HEARTBEAT and MEMORY files, a user ("ana")
// and Skills skills (skills/skill-NN/SKILL.md).
func Workspace(tb testing.TB, dir string) {
	tb.Helper()
	para := func(n int, word string) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%s %d: keep answers short, name the file you read, and say what you did not check.\n", word, i)
			if i%8 == 7 {
				b.WriteString("\n## Section\n\n")
			}
		}
		return b.String()
	}
	files := map[string]string{
		"AGENTS.md":         "# Agents\n\n" + para(6300, "rule"),
		"SOUL.md":           "# Soul\n\n" + para(25000, "truth"),
		"TOOLS.md":          "# Tools\n\nUse the calendar tool for bookings.\n",
		"IDENTITY.md":       "# Identity\n\nName: Quill. Emoji: a feather.\n",
		"USER.md":           "# User\n\nPrefers short answers.\n",
		"HEARTBEAT.md":      "# Heartbeat\n\nCheck the inbox twice a day.\n",
		"MEMORY.md":         "# Memory\n\n- The office moved to the second floor.\n",
		"users/ana/USER.md": "# Ana\n\nLikes tables.\n",
	}
	for i := range Skills {
		slug := fmt.Sprintf("skill-%02d", i)
		files["skills/"+slug+"/SKILL.md"] = fmt.Sprintf("---\nname: %s\ndescription: Use when the guest asks about topic %d; it explains the steps in detail.\n---\n# %s\n\nSteps.\n", slug, i, slug)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
