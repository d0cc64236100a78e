package prompt

import (
	"testing"
)

// TestParseConfigLinks: the keys that tie an agent to others, and the
// budget's unit, parse with errors on the offending line.
func TestParseConfigLinks(t *testing.T) {
	tests := []struct {
		name, yaml string
		wantCode   string
		wantLine   int
		check      func(t *testing.T, c Config)
	}{
		{name: "all", yaml: "description: Front desk\nteam: {name: front-desk, role: lead}\ndelegation:\n  - b\n  - {agent: c, when: homework}\navailability:\n  status: days\n  out_of_scope: [payments]\n",
			check: func(t *testing.T, c Config) {
				if c.Description != "Front desk" || c.Team != "front-desk" || c.TeamRole != "lead" || len(c.Delegation) != 2 ||
					c.Delegation[1].Agent != "c" || c.Delegation[1].When != "homework" || c.Delegation[1].At.Line != 5 ||
					c.Availability.Status != "days" || len(c.Availability.OutOfScope) != 1 {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "short forms", yaml: "team: crew\navailability: nights\n", check: func(t *testing.T, c Config) {
			if c.Team != "crew" || c.Availability.Status != "nights" {
				t.Fatalf("got %+v", c)
			}
		}},
		{name: "tokens", yaml: "budget:\n  per_file: 900\n  unit: tokens\n  context_share: 0.3\n", check: func(t *testing.T, c Config) {
			b := c.Budget
			if b.Unit != UnitTokens || b.PerFileTokens != 900 || b.TotalTokens != DefaultTotalTokens || b.MinFileTokens != DefaultMinFileTokens || b.PerFileChars != DefaultBudget.PerFileChars || b.ContextShare != 0.3 {
				t.Fatalf("got %+v", b)
			}
		}},
		{name: "bad unit", yaml: "budget:\n  unit: words\n", wantCode: "agent-yaml-value", wantLine: 2},
		{name: "bad share", yaml: "budget:\n  context_share: 2\n", wantCode: "agent-yaml-range", wantLine: 2},
		{name: "bad team", yaml: "team: Front Desk\n", wantCode: "agent-yaml-team", wantLine: 1},
		{name: "team key", yaml: "team:\n  name: crew\n  boss: x\n", wantCode: "agent-yaml-unknown-key", wantLine: 3},
		{name: "delegation not a list", yaml: "delegation: b\n", wantCode: "agent-yaml-value", wantLine: 1},
		{name: "delegation twice", yaml: "delegation: [b, b]\n", wantCode: "agent-yaml-delegation", wantLine: 1},
		{name: "delegation key", yaml: "delegation:\n  - {agent: b, whenever: x}\n", wantCode: "agent-yaml-unknown-key", wantLine: 2},
		{name: "description two lines", yaml: "description: \"a\\nb\"\n", wantCode: "agent-yaml-value", wantLine: 1},
		{name: "availability key", yaml: "availability: {status: x, hours: 3}\n", wantCode: "agent-yaml-unknown-key", wantLine: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, probs := ParseConfig("agents/x/agent.yaml", "x", []byte(tt.yaml))
			if tt.wantCode == "" {
				if len(probs) > 0 {
					t.Fatalf("problems: %v", probs)
				}
				tt.check(t, c)
				return
			}
			if len(probs) == 0 || probs[0].Code != tt.wantCode || probs[0].Line != tt.wantLine || probs[0].Path != "agents/x/agent.yaml" {
				t.Fatalf("problems %v, want %s on line %d", probs, tt.wantCode, tt.wantLine)
			}
		})
	}
}
