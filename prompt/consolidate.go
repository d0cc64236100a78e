package prompt

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ConsolidateSchedule is agent.yaml's consolidate: how often the daemon
// asks a model to distil the agent's recent daily logs into a proposed
// MEMORY.md edit (a proposal branch a person merges or not).
type ConsolidateSchedule struct {
	// Every is the time between two consolidations.
	Every time.Duration `json:"every"`
	// Days is how many days of daily logs each one reads.
	Days int `json:"days"`
}

// Limits of agent.yaml's consolidate.
const (
	MinConsolidateEvery   = time.Hour
	DefaultConsolidateDay = 7
	MaxConsolidateDays    = 366
)

var consolidateKeys = map[string]string{
	"every": "time between two consolidations, e.g. 24h (at least 1h)",
	"days":  "days of daily logs each consolidation reads (default 7)",
}

// parseConsolidate sets cfg.Consolidate from consolidate: {every, days}.
func parseConsolidate(cfg *Config, v *yaml.Node, report reportFunc) {
	if v.Kind != yaml.MappingNode {
		report(v.Line, v.Column, "agent-yaml-value", "consolidate must be a mapping, e.g. \"consolidate: {every: 24h, days: 7}\"")
		return
	}
	s := ConsolidateSchedule{Days: DefaultConsolidateDay}
	ok, seen := true, map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if seen[k.Value] {
			report(k.Line, k.Column, "agent-yaml-duplicate-key", "key consolidate.%s appears twice; keep one", k.Value)
			ok = false
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "every":
			ok = parseEvery(val, &s, report) && ok
		case "days":
			ok = parseDays(val, &s, report) && ok
		default:
			report(k.Line, k.Column, "agent-yaml-unknown-key", "unknown key consolidate.%s; known consolidate keys: %s", k.Value, strings.Join(sortedKeys(consolidateKeys), ", "))
			ok = false
		}
	}
	if !seen["every"] {
		report(v.Line, v.Column, "agent-yaml-value", "consolidate needs every, e.g. \"every: 24h\"")
		ok = false
	}
	if ok {
		cfg.Consolidate = &s
	}
}

func parseEvery(val *yaml.Node, s *ConsolidateSchedule, report reportFunc) bool {
	var str string
	if !decodeScalar(val, &str, report, "consolidate.every") {
		return false
	}
	d, err := time.ParseDuration(str)
	if err != nil {
		report(val.Line, val.Column, "agent-yaml-value", "consolidate.every %q is not a duration such as 24h or 90m", str)
		return false
	}
	if d < MinConsolidateEvery {
		report(val.Line, val.Column, "agent-yaml-range", "consolidate.every must be at least %v, not %v: each consolidation is a call to a model", MinConsolidateEvery, d)
		return false
	}
	s.Every = d
	return true
}

func parseDays(val *yaml.Node, s *ConsolidateSchedule, report reportFunc) bool {
	var n int
	if !decodeScalar(val, &n, report, "consolidate.days") {
		return false
	}
	if n < 1 || n > MaxConsolidateDays {
		report(val.Line, val.Column, "agent-yaml-range", "consolidate.days must be from 1 to %d, not %d", MaxConsolidateDays, n)
		return false
	}
	s.Days = n
	return true
}
