package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/prompt"
)

// benchWorkspace writes the generated workspace: a root agent
// without agent.yaml, AGENTS.md (6.3K), SOUL.md (25K), small files, a user
// and 20 skills (prompt's genWorkspace, again: test helpers do not cross
// packages).
func benchWorkspace(tb testing.TB, dir string) {
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
	for i := range 20 {
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

// BenchmarkColdPromptDisk is the issue's "cold from disk, skills
// included": open the workspace from disk, load its 20 skills (and the
// built-ins) from disk, and assemble a prompt with 15 tools, as the CLI and
// the language server do for every snapshot. Token counts come from a warm
// prompt.Cache.
func BenchmarkColdPromptDisk(b *testing.B) {
	dir := b.TempDir()
	benchWorkspace(b, dir)
	fsys := os.DirFS(dir)
	cache := prompt.NewCache()
	tools := make([]prompt.Tool, 15)
	for i := range tools {
		tools[i] = prompt.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "Does one well-defined thing with the workspace and reports what it did."}
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	run := func() {
		w, err := prompt.Open(fsys, prompt.Options{Cache: cache})
		if err != nil {
			b.Fatal(err)
		}
		a, err := w.Agent("")
		if err != nil {
			b.Fatal(err)
		}
		set := Load(1, Options{WorkspaceDir: dir}.Sources(), nil)
		req := prompt.Request{User: "ana", Now: now, Tools: tools, Skills: set.PromptSkills(Request{Agent: a.Name, User: "ana", Allow: a.Config.Skills})}
		res, err := w.Assemble(req)
		if err != nil {
			b.Fatal(err)
		}
		if res.Report.SkillCount != 23 || res.Report.SkillsMode != "inline" {
			b.Fatalf("skills: %d, %s", res.Report.SkillCount, res.Report.SkillsMode)
		}
	}
	run()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
