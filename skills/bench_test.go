package skills

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/prompttest"
)

// BenchmarkColdPromptDisk is the issue's "cold from disk, skills
// included": open the workspace from disk, load its 20 skills (and the
// built-ins) from disk, and assemble a prompt with 15 tools, as the CLI and
// the language server do for every snapshot. Token counts come from a warm
// prompt.Cache.
func BenchmarkColdPromptDisk(b *testing.B) {
	dir := b.TempDir()
	prompttest.Workspace(b, dir)
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
