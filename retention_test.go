package quire_test

import (
	"os"
	"strings"
	"testing"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
)

// TestRetentionDocsAgree: the default daily-log retention the code applies
// (keep every log) is what the README, the built-in daily-log skill (the
// spec text agents read) and a new agent.yaml say; none says 30 days.
func TestRetentionDocsAgree(t *testing.T) {
	if prompt.DefaultDailyLogRetentionDays != 0 {
		t.Fatalf("the default retention is %d days: update README.md, the daily-log-hygiene skill and this test", prompt.DefaultDailyLogRetentionDays)
	}
	texts := map[string]string{"agent.yaml template": string(templates.AgentYAML("x", prompt.TypePredefined))}
	for _, p := range []string{"README.md", "skills/builtin/daily-log-hygiene/SKILL.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = strings.Join(strings.Fields(string(b)), " ")
	}
	want := map[string]string{
		"README.md": "`daily_log_retention_days` defaults to 0, which keeps every log",
		"skills/builtin/daily-log-hygiene/SKILL.md": "Logs are kept by default (`daily_log_retention_days: 0`)",
		"agent.yaml template":                       "daily_log_retention_days: 0   # keep every daily log",
	}
	for name, text := range texts {
		if !strings.Contains(text, want[name]) {
			t.Errorf("%s does not say the default retention keeps every log (%q)", name, want[name])
		}
		if strings.Contains(text, "30 days by default") {
			t.Errorf("%s still says 30 days by default", name)
		}
	}
}
