package prompt_test

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// The prompt injects exactly the daily logs of the shared table: every
// row's file is in one workspace, and a session on each day named in a
// row, for each user, injects a row's file only when the table says it is
// that day's (or the day before's) log of that user or the agent.
func TestDailyLogRulePrompt(t *testing.T) {
	cases := testenv.DailyLogCases(t)
	fsys := fstest.MapFS{workspace.AgentsFile: &fstest.MapFile{Data: []byte("# Agents\n")}}
	marker := func(p string) string { return "entry of " + p }
	days := map[time.Time]bool{}
	users := map[string]bool{"": true}
	dateRE := regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	for _, c := range cases {
		fsys[c.Path] = &fstest.MapFile{Data: []byte(marker(c.Path) + "\n")}
		if d, err := time.Parse(time.DateOnly, dateRE.FindString(c.Path)); err == nil {
			days[d] = true
		}
		if dir, _, ok := workspace.SplitUser(c.Path); ok {
			if id, err := workspace.DecodeID(dir); err == nil {
				users[id] = true
			}
		}
	}
	ws, err := prompt.Open(fsys, prompt.Options{RootName: "ada", EstimateTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	injected := map[string]bool{}
	for day := range days {
		for user := range users {
			res, err := ws.Assemble(prompt.Request{User: user, Now: day.Add(12 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				if strings.Contains(res.Prompt, marker(c.Path)) {
					injected[c.Path] = true
				}
			}
		}
	}
	for _, c := range cases {
		if c.Path == workspace.MemoryFile || c.Path == workspace.MemoryFallbackFile {
			continue // injected as what they are, not as logs
		}
		if injected[c.Path] != c.IsLog() {
			t.Errorf("%s injected: %v, want %v", c.Path, injected[c.Path], c.IsLog())
		}
	}
}
