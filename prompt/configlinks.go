package prompt

import (
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/quirehq/quire/workspace"
)

// DelegationTarget is an agent of the same repository this agent may
// hand work to (agent.yaml delegation:).
type DelegationTarget struct {
	// Agent names the target.
	Agent string `json:"agent"`
	// When says in a line when to delegate to it ("" for always useful).
	When string `json:"when,omitempty"`
	// At is where the entry is in agent.yaml.
	At Position `json:"-"`
}

// Availability is what agent.yaml says of when and for what the agent is
// there: AVAILABILITY.md, the negative context, is built from it.
type Availability struct {
	// Status is a line such as "on duty 07:00–23:00, Europe/Lisbon".
	Status string `json:"status,omitempty"`
	// OutOfScope lists what the agent must not take on.
	OutOfScope []string `json:"out_of_scope,omitempty"`
}

// linkKeys are the agent.yaml keys that tie an agent to the others of its
// repository; they are merged into configKeys.
var linkKeys = map[string]string{
	"description":  "one line saying what the agent does: other agents' DELEGATION.md and TEAM.md show it",
	"team":         "the team the agent belongs to: a name, or {name, role}; the team's files are _shared/teams/<name>/",
	"delegation":   "agents of this repository this one may hand work to: names, or {agent, when}",
	"availability": "when and for what the agent is there: a status line, or {status, out_of_scope: [...]}",
}

func init() {
	for k, v := range linkKeys {
		configKeys[k] = v
	}
}

// parseLinkKey sets one of linkKeys in cfg; false for another key.
func parseLinkKey(cfg *Config, key string, v *yaml.Node, report reportFunc) bool {
	switch key {
	case "description":
		if s, ok := parseLine(v, report, key); ok {
			cfg.Description = s
		}
	case "team":
		parseTeam(cfg, v, report)
	case "delegation":
		parseDelegation(cfg, v, report)
	case "availability":
		parseAvailability(cfg, v, report)
	default:
		return false
	}
	return true
}

// parseLine decodes a one-line, non-empty text value of key.
func parseLine(v *yaml.Node, report reportFunc, key string) (string, bool) {
	var s string
	if !decodeScalar(v, &s, report, key) {
		return "", false
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		report(v.Line, v.Column, "agent-yaml-value", "%s is empty; remove the key or write a line of text", key)
		return "", false
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		report(v.Line, v.Column, "agent-yaml-value", "%s must be one line of plain text (it holds a line break or a control character)", key)
		return "", false
	}
	return s, true
}

// parseTeam reads team: NAME or team: {name: NAME, role: ROLE}.
func parseTeam(cfg *Config, v *yaml.Node, report reportFunc) {
	var name, role string
	nameAt := v
	switch v.Kind {
	case yaml.ScalarNode:
		if !decodeScalar(v, &name, report, "team") {
			return
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			switch k.Value {
			case "name":
				nameAt = val
				if !decodeScalar(val, &name, report, "team.name") {
					return
				}
			case "role":
				var ok bool
				if role, ok = parseLine(val, report, "team.role"); !ok {
					return
				}
			default:
				report(k.Line, k.Column, "agent-yaml-unknown-key", "unknown key team.%s; known team keys: name, role", k.Value)
				return
			}
		}
	default:
		report(v.Line, v.Column, "agent-yaml-value", "team must be a name or a mapping {name: …, role: …}")
		return
	}
	if !workspace.ValidTeamName(name) {
		report(nameAt.Line, nameAt.Column, "agent-yaml-team", "team %q is not a team name: lower-case letters, digits, - and _ (it names the directory %s/<team>/)", name, workspace.TeamsDir)
		return
	}
	cfg.Team, cfg.TeamRole = name, role
}

// parseDelegation reads delegation: [NAME | {agent: NAME, when: TEXT}, …].
func parseDelegation(cfg *Config, v *yaml.Node, report reportFunc) {
	if v.Kind != yaml.SequenceNode {
		report(v.Line, v.Column, "agent-yaml-value", "delegation must be a list of agent names, e.g. [billing, studybuddy]")
		return
	}
	seen := map[string]bool{}
	targets := make([]DelegationTarget, 0, len(v.Content))
	for _, item := range v.Content {
		t, ok := parseTarget(item, report)
		if !ok {
			continue
		}
		if seen[t.Agent] {
			report(item.Line, item.Column, "agent-yaml-delegation", "delegation: %q is listed twice", t.Agent)
			continue
		}
		seen[t.Agent] = true
		targets = append(targets, t)
	}
	cfg.Delegation = targets
}

func parseTarget(item *yaml.Node, report reportFunc) (DelegationTarget, bool) {
	t := DelegationTarget{At: Position{Line: item.Line, Column: item.Column}}
	switch item.Kind {
	case yaml.ScalarNode:
		if !decodeScalar(item, &t.Agent, report, "delegation") {
			return t, false
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, val := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "agent":
				if !decodeScalar(val, &t.Agent, report, "delegation.agent") {
					return t, false
				}
			case "when":
				s, ok := parseLine(val, report, "delegation.when")
				if !ok {
					return t, false
				}
				t.When = s
			default:
				report(k.Line, k.Column, "agent-yaml-unknown-key", "unknown key delegation.%s; known keys: agent, when", k.Value)
				return t, false
			}
		}
	default:
		report(item.Line, item.Column, "agent-yaml-value", "a delegation entry is an agent name or {agent: …, when: …}")
		return t, false
	}
	if strings.TrimSpace(t.Agent) == "" || strings.ContainsAny(t.Agent, "/\\") {
		report(item.Line, item.Column, "agent-yaml-delegation", "delegation: %q is not an agent name", t.Agent)
		return t, false
	}
	return t, true
}

// parseAvailability reads availability: STATUS or {status, out_of_scope}.
func parseAvailability(cfg *Config, v *yaml.Node, report reportFunc) {
	var a Availability
	switch v.Kind {
	case yaml.ScalarNode:
		s, ok := parseLine(v, report, "availability")
		if !ok {
			return
		}
		a.Status = s
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			switch k.Value {
			case "status":
				s, ok := parseLine(val, report, "availability.status")
				if !ok {
					return
				}
				a.Status = s
			case "out_of_scope":
				if !decodeSeq(val, &a.OutOfScope, report, "availability.out_of_scope") {
					return
				}
			default:
				report(k.Line, k.Column, "agent-yaml-unknown-key", "unknown key availability.%s; known keys: status, out_of_scope", k.Value)
				return
			}
		}
	default:
		report(v.Line, v.Column, "agent-yaml-value", "availability must be a status line or {status: …, out_of_scope: […]}")
		return
	}
	cfg.Availability = a
}
