package prompt

import (
	"strings"
	"testing"

	"github.com/quirehq/quire/workspace"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantCode string // first problem's code, "" for none
		wantLine int
		check    func(t *testing.T, c Config)
	}{
		{name: "empty", yaml: "", check: func(t *testing.T, c Config) {
			if c.Type != TypePredefined || c.Budget != DefaultBudget || c.Policy != PolicyTruncate || c.Skills != nil || c.WriteLimitBytes != 16384 || c.DailyLogRetentionDays != 0 {
				t.Fatalf("defaults not applied: %+v", c)
			}
		}},
		{name: "full", yaml: "name: x\ntype: open\npolicy: reject\nbudget:\n  per_file: 100\n  total: 500\n  min_file: 0\n  head_ratio: 0.6\n  tail_ratio: 0.3\norder: [SOUL.md, AGENTS.md]\nskills: []\nidentity: I am x.\nwrite_limit_bytes: 10\ndaily_log_retention_days: 0\ntimezone: Europe/Lisbon\n",
			check: func(t *testing.T, c Config) {
				want := Budget{Unit: UnitChars, PerFileChars: 100, TotalChars: 500, MinFileChars: 0, HeadRatio: 0.6, TailRatio: 0.3}
				if c.Name != "x" || c.Type != TypeOpen || c.Policy != PolicyReject || c.Budget != want || len(c.Order) != 2 || c.Skills == nil || len(c.Skills) != 0 ||
					c.Identity != "I am x." || c.WriteLimitBytes != 10 || c.DailyLogRetentionDays != 0 || c.Location.String() != "Europe/Lisbon" {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "skills at", yaml: "name: x\nskills:\n  - pdf\n  - web-search\n", check: func(t *testing.T, c Config) {
			want := []Position{{Line: 3, Column: 5}, {Line: 4, Column: 5}}
			if strings.Join(c.Skills, ",") != "pdf,web-search" || len(c.SkillsAt) != 2 || c.SkillsAt[0] != want[0] || c.SkillsAt[1] != want[1] {
				t.Fatalf("skills %q at %+v, want at %+v", c.Skills, c.SkillsAt, want)
			}
		}},
		{name: "memory text weight", yaml: "memory_text_weight: 0.5\n", check: func(t *testing.T, c Config) {
			if c.MemoryTextWeight == nil || *c.MemoryTextWeight != 0.5 {
				t.Fatalf("memory_text_weight: %v", c.MemoryTextWeight)
			}
		}},
		{name: "memory text weight out of range", yaml: "memory_text_weight: 1.5\n", wantCode: "agent-yaml-range", wantLine: 1},
		{name: "unknown key", yaml: "name: x\n\ncolour: blue\n", wantCode: "agent-yaml-unknown-key", wantLine: 3},
		{name: "unknown budget key", yaml: "budget:\n  per_fil: 3\n", wantCode: "agent-yaml-unknown-key", wantLine: 2},
		{name: "bad type", yaml: "type: closed\n", wantCode: "agent-yaml-type", wantLine: 1},
		{name: "bad policy", yaml: "policy: drop\n", wantCode: "agent-yaml-policy", wantLine: 1},
		{name: "syntax", yaml: "name: [x\n", wantCode: "agent-yaml-syntax"},
		{name: "not a mapping", yaml: "- a\n- b\n", wantCode: "agent-yaml-shape", wantLine: 1},
		{name: "negative budget", yaml: "budget: {per_file: -1}\n", wantCode: "agent-yaml-range", wantLine: 1},
		{name: "ratio sum", yaml: "budget: {head_ratio: 0.8, tail_ratio: 0.3}\n", wantCode: "agent-yaml-range", wantLine: 1},
		{name: "string budget", yaml: "budget:\n  total: lots\n", wantCode: "agent-yaml-value", wantLine: 2},
		{name: "ratio sum on the ratio key", yaml: "budget:\n  per_file: 100\n  head_ratio: 0.8\n  tail_ratio: 0.3\n", wantCode: "agent-yaml-range", wantLine: 4},
		{name: "fractional min_file", yaml: "budget:\n  min_file: 1.5\n", wantCode: "agent-yaml-value", wantLine: 2},
		{name: "control character in identity", yaml: "identity: \"I am\\u0007 x\"\n", wantCode: "agent-yaml-identity", wantLine: 1},
		{name: "bad timezone", yaml: "timezone: Mars/Olympus\n", wantCode: "agent-yaml-timezone", wantLine: 1},
		{name: "order unknown file", yaml: "order: [SOUL.md, README.md]\n", wantCode: "agent-yaml-order", wantLine: 1},
		{name: "skills not a list", yaml: "skills: all\n", wantCode: "agent-yaml-value", wantLine: 1},
		{name: "duplicate key", yaml: "name: a\nname: b\n", wantCode: "agent-yaml-duplicate-key", wantLine: 2},
		{name: "name with slash", yaml: "name: ../x\n", wantCode: "agent-yaml-name", wantLine: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, probs := ParseConfig("a/agent.yaml", "a", []byte(tc.yaml))
			if tc.wantCode == "" {
				if len(probs) > 0 {
					t.Fatalf("unexpected problems: %v", probs)
				}
			} else {
				if len(probs) == 0 {
					t.Fatalf("want problem %s, got none", tc.wantCode)
				}
				p := probs[0]
				if p.Code != tc.wantCode || (tc.wantLine > 0 && p.Line != tc.wantLine) || p.Severity != workspace.SeverityError || p.Path != "a/agent.yaml" {
					t.Fatalf("got %+v, want code %s line %d", p, tc.wantCode, tc.wantLine)
				}
				if !strings.Contains(p.String(), "a/agent.yaml:") {
					t.Fatalf("problem does not name the file: %s", p)
				}
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestParseConfigUnknownKeyListsKnownKeys(t *testing.T) {
	_, probs := ParseConfig("agent.yaml", "a", []byte("tpye: open\n"))
	if len(probs) != 1 || !strings.Contains(probs[0].Message, `"tpye"`) || !strings.Contains(probs[0].Message, "type") {
		t.Fatalf("got %v", probs)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("name: x\ntype: open\nbudget: {per_file: 10}\n")
	f.Add("order: [SOUL.md]\nskills: []\n")
	f.Add("budget:\n  head_ratio: .5\n  tail_ratio: .4\n")
	f.Fuzz(func(t *testing.T, data string) {
		c, probs := ParseConfig("agent.yaml", "d", []byte(data))
		for _, p := range probs {
			if p.Message == "" || p.Path != "agent.yaml" {
				t.Fatalf("problem without message or path: %+v", p)
			}
		}
		b := c.Budget
		if b.PerFileChars <= 0 || b.TotalChars <= 0 || b.MinFileChars < 0 || b.HeadRatio <= 0 || b.TailRatio <= 0 || b.HeadRatio+b.TailRatio >= 1 {
			t.Fatalf("invalid budget accepted: %+v", b)
		}
		if c.Type != TypePredefined && c.Type != TypeOpen || c.Location == nil {
			t.Fatalf("invalid config accepted: %+v", c)
		}
	})
}
