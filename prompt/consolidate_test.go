package prompt

import (
	"strings"
	"testing"
	"time"
)

func TestParseConsolidate(t *testing.T) {
	tests := []struct {
		yaml string
		want *ConsolidateSchedule
		err  string // a substring of the one problem, "" for none
		line int
	}{
		{yaml: "consolidate: {every: 24h, days: 3}\n", want: &ConsolidateSchedule{Every: 24 * time.Hour, Days: 3}},
		{yaml: "consolidate:\n  every: 12h\n", want: &ConsolidateSchedule{Every: 12 * time.Hour, Days: 7}},
		{yaml: "consolidate: daily\n", err: "consolidate must be a mapping", line: 1},
		{yaml: "consolidate:\n  days: 3\n", err: "consolidate needs every", line: 2},
		{yaml: "consolidate:\n  every: 5m\n", err: "consolidate.every must be at least 1h0m0s", line: 2},
		{yaml: "consolidate:\n  every: often\n", err: `consolidate.every "often" is not a duration`, line: 2},
		{yaml: "consolidate:\n  every: 24h\n  days: 0\n", err: "consolidate.days must be from 1 to 366", line: 3},
		{yaml: "consolidate:\n  every: 24h\n  hours: 3\n", err: "unknown key consolidate.hours; known consolidate keys: days, every", line: 3},
		{yaml: "consolidate:\n  every: 24h\n  every: 12h\n", err: "consolidate.every appears twice", line: 3},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			cfg, probs := ParseConfig("a/agent.yaml", "a", []byte(tt.yaml))
			if tt.err == "" {
				if len(probs) != 0 || cfg.Consolidate == nil || *cfg.Consolidate != *tt.want {
					t.Fatalf("Consolidate = %+v, problems %v; want %+v", cfg.Consolidate, probs, tt.want)
				}
				return
			}
			if len(probs) != 1 || !strings.Contains(probs[0].Message, tt.err) || probs[0].Line != tt.line {
				t.Fatalf("problems = %v; want one on line %d saying %q", probs, tt.line, tt.err)
			}
			if cfg.Consolidate != nil {
				t.Fatalf("an invalid schedule was kept: %+v", cfg.Consolidate)
			}
		})
	}
}
