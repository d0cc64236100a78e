package skills

import (
	"fmt"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/prompttest"
	"github.com/quirehq/quire/workspace"
)

// BenchmarkColdPromptDisk is the issue's "cold from disk, skills
// included": open the workspace from disk, load its 20 skills (and the
// built-ins) from disk, and assemble a prompt with 15 tools, as the CLI and
// the language server do for every snapshot. Token counts come from a warm
// prompt.Tokenizer.
func BenchmarkColdPromptDisk(b *testing.B) {
	dir := b.TempDir()
	prompttest.Workspace(b, dir)
	tools := make([]prompt.Tool, 15)
	for i := range tools {
		tools[i] = prompt.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "Does one well-defined thing with the workspace and reports what it did."}
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	// The CLI and the language server read the workspace through
	// workspace.Dir; os.DirFS is the plain reading.
	for _, c := range []struct {
		name string
		fsys fs.FS
	}{{"os.DirFS", os.DirFS(dir)}, {"workspace.Dir", workspace.DirFS(dir)}} {
		b.Run(c.name, func(b *testing.B) {
			cache := prompt.NewTokenizer()
			run := func() {
				w, err := prompt.Open(c.fsys, prompt.Options{Tokenizer: cache})
				if err != nil {
					b.Fatal(err)
				}
				a, err := w.Agent("")
				if err != nil {
					b.Fatal(err)
				}
				set := Load(1, Options{WorkspaceDir: dir}.Sources())
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
			start := testenv.CPUTime()
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64((testenv.CPUTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
