package prompt

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/quirehq/quire/workspace"
)

// AgentType decides which context files are shared by all users of an agent
// and which each user has for themselves.
type AgentType string

const (
	// TypePredefined agents share AGENTS, SOUL, IDENTITY, TOOLS, USER_PREDEFINED
	// and HEARTBEAT; each user has their own USER.md and BOOTSTRAP.md.
	TypePredefined AgentType = "predefined"
	// TypeOpen agents give every user their own copy of every context file;
	// a user without a copy of a file gets the agent-level one.
	TypeOpen AgentType = "open"
)

// Policy decides what happens to a context file over its per-file budget.
type Policy string

const (
	// PolicyTruncate keeps a head and a tail with a marker between them.
	PolicyTruncate Policy = "truncate"
	// PolicyReject makes such a file an error: the git endpoint refuses the
	// push and `quire check` fails. Assembly still truncates, and says so.
	PolicyReject Policy = "reject"
)

// Budget limits how much of the context files reaches the prompt. Its
// Unit says which sizes hold: the chars ones (the default; a character is
// a Unicode code point) or the tokens ones (o200k_base, counted exactly).
type Budget struct {
	Unit         BudgetUnit `json:"unit"`
	PerFileChars int        `json:"per_file"`
	TotalChars   int        `json:"total"`
	MinFileChars int        `json:"min_file"`
	// The sizes in tokens, set when Unit is UnitTokens.
	PerFileTokens int     `json:"per_file_tokens,omitempty"`
	TotalTokens   int     `json:"total_tokens,omitempty"`
	MinFileTokens int     `json:"min_file_tokens,omitempty"`
	HeadRatio     float64 `json:"head_ratio"`
	TailRatio     float64 `json:"tail_ratio"`
	// ContextShare is the share of a model's context window the context
	// files may take when a request names its window (0: DefaultContextShare).
	ContextShare float64 `json:"context_share,omitempty"`
}

// DefaultBudget is the budget of behavior.md §3.
var DefaultBudget = Budget{Unit: UnitChars, PerFileChars: 20000, TotalChars: 24000, MinFileChars: 64, HeadRatio: 0.7, TailRatio: 0.2}

// Defaults for the other agent.yaml keys.
const (
	DefaultWriteLimitBytes       = 16384
	DefaultDailyLogRetentionDays = 0
	DefaultIdentity              = "You are a personal assistant running inside Quire."
)

// Config is an agent's agent.yaml with defaults applied.
type Config struct {
	// Name of the agent; defaults to the directory name.
	Name   string    `json:"name"`
	Type   AgentType `json:"type"`
	Budget Budget    `json:"budget"`
	Policy Policy    `json:"policy"`
	// Order lists context files in the order they are charged against the
	// total budget; files not listed follow in the session's order.
	Order []string `json:"order,omitempty"`
	// Skills is the allow list of skill slugs: nil allows every skill, an
	// empty (non-nil) list allows none.
	Skills []string `json:"skills"`
	// SkillsAt is where each entry of Skills is in agent.yaml (line and
	// column), for a problem about one of them.
	SkillsAt []Position `json:"-"`
	// Identity is the first line of the system prompt.
	Identity        string `json:"identity"`
	WriteLimitBytes int    `json:"write_limit_bytes"`
	// DailyLogRetentionDays is how long daily logs are kept; 0 keeps them.
	DailyLogRetentionDays int `json:"daily_log_retention_days"`
	// MemoryTextWeight is the full-text side's weight in a memory
	// search's hybrid score (0..1); nil means the store's default.
	MemoryTextWeight *float64 `json:"memory_text_weight,omitempty"`
	// Timezone is an IANA name; "" means UTC.
	Timezone string `json:"timezone,omitempty"`
	// Location is Timezone loaded.
	Location *time.Location `json:"-"`
	// SkillUnknownKeys says what to do about SKILL.md front-matter keys
	// Quire does not know: SkillKeysWarn (the default) or SkillKeysIgnore.
	SkillUnknownKeys string `json:"skill_unknown_keys"`
	// Consolidate, when set, has the daemon propose a MEMORY.md distilled
	// from the recent daily logs on a schedule (see consolidate.go).
	Consolidate *ConsolidateSchedule `json:"consolidate,omitempty"`

	// Description says in a line what the agent does; other agents'
	// DELEGATION.md and TEAM.md show it.
	Description string `json:"description,omitempty"`
	// Team is the team the agent belongs to ("" for none), TeamRole its
	// role there.
	Team     string `json:"team,omitempty"`
	TeamRole string `json:"team_role,omitempty"`
	// Delegation lists the agents of the repository it may hand work to.
	Delegation []DelegationTarget `json:"delegation,omitempty"`
	// Availability is when and for what the agent is there.
	Availability Availability `json:"availability"`
}

// Values of agent.yaml's skill_unknown_keys.
const (
	SkillKeysWarn   = "warn"
	SkillKeysIgnore = "ignore"
)

// DefaultConfig returns the configuration of an agent whose agent.yaml is
// empty or missing.
func DefaultConfig(name string) Config {
	return Config{
		Name:                  name,
		Type:                  TypePredefined,
		Budget:                DefaultBudget,
		Policy:                PolicyTruncate,
		Identity:              DefaultIdentity,
		WriteLimitBytes:       DefaultWriteLimitBytes,
		DailyLogRetentionDays: DefaultDailyLogRetentionDays,
		Location:              time.UTC,
		SkillUnknownKeys:      SkillKeysWarn,
	}
}

// configKeys are the keys agent.yaml may have, with a one-line description
// each (used for error messages and editor completion).
var configKeys = map[string]string{
	"name":                     "agent name (default: the directory name)",
	"type":                     "predefined (default) or open",
	"budget":                   "per_file, total, min_file, head_ratio, tail_ratio",
	"policy":                   "truncate (default) or reject",
	"order":                    "context files in the order they are charged against the total budget",
	"skills":                   "allow list of skill slugs (absent: all, []: none)",
	"identity":                 "the first line of the system prompt",
	"write_limit_bytes":        "largest write a chat client may make (default 16384)",
	"daily_log_retention_days": "days to keep memory/YYYY-MM-DD.md logs (default 0: keep them all)",
	"timezone":                 "IANA time zone for daily logs and the current time (default UTC)",
	"skill_unknown_keys":       "warn (default) or ignore: SKILL.md front-matter keys Quire does not know",
	"memory_text_weight":       "weight of full text against vectors in memory search, 0 to 1 (default 0.9)",
	"consolidate":              "every, days: propose a MEMORY.md distilled from the daily logs on a schedule",
}

var budgetKeys = map[string]string{
	"unit":          "chars (default) or tokens: the unit of per_file, total and min_file",
	"per_file":      "largest number of chars one context file may inject (default 20000; with unit: tokens, tokens, default 5000)",
	"total":         "largest number of chars all context files together may inject (default 24000; with unit: tokens, tokens, default 6000)",
	"min_file":      "stop adding files when less than this many chars remain (default 64; with unit: tokens, tokens, default 16)",
	"head_ratio":    "share of the per-file budget kept from the start of a long file (default 0.7)",
	"tail_ratio":    "share of the per-file budget kept from the end of a long file (default 0.2)",
	"context_share": "share of a model's context window the context files may take when a request names its window (default 0.25)",
}

// ConfigKeys returns the keys agent.yaml accepts, with descriptions; nested
// budget keys are returned as "budget.per_file" and so on.
func ConfigKeys() map[string]string {
	out := make(map[string]string, len(configKeys)+len(budgetKeys))
	for k, v := range configKeys {
		out[k] = v
	}
	for k, v := range budgetKeys {
		out["budget."+k] = v
	}
	return out
}

// ParseConfig parses agent.yaml (found at path, used in problems) for an
// agent whose default name is defaultName. It never fails: a field that is
// malformed keeps its default and is reported as an error Problem with the
// line of the offending key, so an editor can keep previewing while the
// user types.
func ParseConfig(path, defaultName string, data []byte) (Config, []workspace.Problem) {
	return parseConfig(path, defaultName, data, true)
}

// parseConfig is ParseConfig, trying parseSimpleYAML first when simple is
// set (tests compare it with yaml.v3 alone).
func parseConfig(path, defaultName string, data []byte, simple bool) (Config, []workspace.Problem) {
	cfg := DefaultConfig(defaultName)
	var probs []workspace.Problem
	report := func(line, col int, code, format string, args ...any) {
		probs = append(probs, workspace.Problem{Path: path, Line: line, Column: col, Severity: workspace.SeverityError, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	var root *yaml.Node
	ok := false
	if simple {
		root, ok = parseSimpleYAML(data)
	}
	if !ok {
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			report(yamlErrorLine(err), 0, "agent-yaml-syntax", "agent.yaml is not valid YAML: %s", trimYAMLError(err))
			return cfg, probs
		}
		if len(doc.Content) == 0 {
			return cfg, nil
		}
		root = doc.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		report(root.Line, root.Column, "agent-yaml-shape", "agent.yaml must be a mapping of keys to values, e.g. \"type: open\"")
		return cfg, probs
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			report(k.Line, k.Column, "agent-yaml-key", "a key must be a plain word such as name or budget, not a %s; known keys: %s", nodeKind(k), strings.Join(sortedKeys(configKeys), ", "))
			continue
		}
		if seen[k.Value] {
			report(k.Line, k.Column, "agent-yaml-duplicate-key", "key %q appears twice", k.Value)
			continue
		}
		seen[k.Value] = true
		if !parseKey(&cfg, k.Value, v, report) {
			report(k.Line, k.Column, "agent-yaml-unknown-key", "unknown key %q; known keys: %s", k.Value, strings.Join(sortedKeys(configKeys), ", "))
		}
	}
	return cfg, probs
}

// parseKey sets the value v of key in cfg, reporting what is wrong with
// it; it returns false for a key agent.yaml does not have.
func parseKey(cfg *Config, key string, v *yaml.Node, report reportFunc) bool {
	switch key {
	case "name":
		parseName(cfg, v, report)
	case "type":
		parseEnum(v, report, key, "agent-yaml-type", []AgentType{TypePredefined, TypeOpen}, &cfg.Type)
	case "policy":
		parseEnum(v, report, key, "agent-yaml-policy", []Policy{PolicyTruncate, PolicyReject}, &cfg.Policy)
	case "identity":
		parseIdentity(cfg, v, report)
	case "timezone":
		parseTimezone(cfg, v, report)
	case "write_limit_bytes":
		var n int
		if decodeScalar(v, &n, report, key) {
			if n <= 0 {
				report(v.Line, v.Column, "agent-yaml-range", "write_limit_bytes must be positive, not %d", n)
			} else {
				cfg.WriteLimitBytes = n
			}
		}
	case "daily_log_retention_days":
		var n int
		if decodeScalar(v, &n, report, key) {
			if n < 0 {
				report(v.Line, v.Column, "agent-yaml-range", "daily_log_retention_days must be 0 (keep) or positive, not %d", n)
			} else {
				cfg.DailyLogRetentionDays = n
			}
		}
	case "memory_text_weight":
		var f float64
		if decodeScalar(v, &f, report, key) {
			if !(f >= 0 && f <= 1) {
				report(v.Line, v.Column, "agent-yaml-range", "memory_text_weight must be between 0 and 1, not %g", f)
			} else {
				cfg.MemoryTextWeight = &f
			}
		}
	case "order":
		var names []string
		if decodeSeq(v, &names, report, key) {
			cfg.Order = validOrder(v, names, report)
		}
	case "skills":
		parseSkills(cfg, v, report)
	case "skill_unknown_keys":
		parseEnum(v, report, key, "agent-yaml-value", []string{SkillKeysWarn, SkillKeysIgnore}, &cfg.SkillUnknownKeys)
	case "budget":
		parseBudget(v, &cfg.Budget, report)
	case "consolidate":
		parseConsolidate(cfg, v, report)
	default:
		return parseLinkKey(cfg, key, v, report)
	}
	return true
}

// parseEnum sets *dst to v when v is one of values, and reports code
// naming them otherwise.
func parseEnum[T ~string](v *yaml.Node, report reportFunc, key, code string, values []T, dst *T) {
	var s string
	if !decodeScalar(v, &s, report, key) {
		return
	}
	if slices.Contains(values, T(s)) {
		*dst = T(s)
		return
	}
	names := make([]string, len(values))
	for i, x := range values {
		names[i] = string(x)
	}
	report(v.Line, v.Column, code, "%s %q is unknown; use %s", key, s, strings.Join(names, " or "))
}

func parseName(cfg *Config, v *yaml.Node, report reportFunc) {
	var s string
	if !decodeScalar(v, &s, report, "name") {
		return
	}
	if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "/\\") {
		report(v.Line, v.Column, "agent-yaml-name", "name %q must be non-empty and contain no slashes", s)
		return
	}
	cfg.Name = s
}

func parseIdentity(cfg *Config, v *yaml.Node, report reportFunc) {
	var s string
	if !decodeScalar(v, &s, report, "identity") {
		return
	}
	s = strings.TrimSpace(s)
	if s == "" {
		report(v.Line, v.Column, "agent-yaml-identity", "identity is empty; remove the key to use the default")
	} else if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		report(v.Line, v.Column, "agent-yaml-identity", "identity holds the control character %U at byte %d; the identity is one line of plain text", r, i)
	} else {
		cfg.Identity = s
	}
}

func parseTimezone(cfg *Config, v *yaml.Node, report reportFunc) {
	var s string
	if !decodeScalar(v, &s, report, "timezone") {
		return
	}
	loc, err := time.LoadLocation(s)
	if err != nil || s == "" || s == "Local" {
		report(v.Line, v.Column, "agent-yaml-timezone", "timezone %q is not an IANA time zone name such as Europe/Lisbon", s)
		return
	}
	cfg.Timezone, cfg.Location = s, loc
}

// parseSkills sets the allow list and where each name is (for messages
// about one).
func parseSkills(cfg *Config, v *yaml.Node, report reportFunc) {
	var names []string
	if !decodeSeq(v, &names, report, "skills") {
		return
	}
	if names == nil {
		names = []string{}
	}
	cfg.Skills = names
	cfg.SkillsAt = make([]Position, len(v.Content))
	for i, item := range v.Content {
		cfg.SkillsAt[i] = Position{Line: item.Line, Column: item.Column}
	}
}

type reportFunc func(line, col int, code, format string, args ...any)

func decodeScalar[T any](v *yaml.Node, dst *T, report reportFunc, key string) bool {
	if v.Kind != yaml.ScalarNode {
		report(v.Line, v.Column, "agent-yaml-value", "%s must be a single value", key)
		return false
	}
	if p, ok := any(dst).(*string); ok && v.Tag == "!!str" && v.Style&^(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		*p = v.Value // what Decode makes of a string, without its allocations
		return true
	}
	if err := v.Decode(dst); err != nil {
		report(v.Line, v.Column, "agent-yaml-value", "%s: %s", key, trimYAMLError(err))
		return false
	}
	return true
}

func decodeSeq(v *yaml.Node, dst *[]string, report reportFunc, key string) bool {
	if v.Kind != yaml.SequenceNode {
		report(v.Line, v.Column, "agent-yaml-value", "%s must be a list, e.g. [a, b]", key)
		return false
	}
	for _, item := range v.Content {
		if item.Kind != yaml.ScalarNode || item.Tag != "!!str" && item.Tag != "" {
			report(item.Line, item.Column, "agent-yaml-value", "%s entries must be plain names", key)
			return false
		}
	}
	if err := v.Decode(dst); err != nil {
		report(v.Line, v.Column, "agent-yaml-value", "%s: %s", key, trimYAMLError(err))
		return false
	}
	return true
}

func validOrder(v *yaml.Node, names []string, report reportFunc) []string {
	seen := map[string]bool{}
	var out []string
	for i, n := range names {
		line, col := v.Content[i].Line, v.Content[i].Column
		switch {
		case !workspace.IsContextFileName(n):
			report(line, col, "agent-yaml-order", "order: %q is not a context file; use names such as %s", n, strings.Join(workspace.ContextFiles, ", "))
		case seen[n]:
			report(line, col, "agent-yaml-order", "order: %q is listed twice", n)
		default:
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func parseBudget(v *yaml.Node, b *Budget, report reportFunc) {
	if v.Kind != yaml.MappingNode {
		report(v.Line, v.Column, "agent-yaml-value", "budget must be a mapping, e.g. \"budget: {per_file: 20000}\"")
		return
	}
	nb := *b
	parseBudgetUnit(v, &nb, report)
	// The sum of the ratios is reported on the last ratio key written,
	// or on budget: when both are defaults.
	ratioLine, ratioCol := v.Line, v.Column
	seenBudget := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			report(k.Line, k.Column, "agent-yaml-key", "a budget key must be a plain word, not a %s; known budget keys: %s", nodeKind(k), strings.Join(sortedKeys(budgetKeys), ", "))
			continue
		}
		if seenBudget[k.Value] {
			report(k.Line, k.Column, "agent-yaml-duplicate-key", "key budget.%s appears twice; keep one", k.Value)
			continue
		}
		seenBudget[k.Value] = true
		switch k.Value {
		case "unit": // read first, by parseBudgetUnit
		case "context_share":
			parseContextShare(val, &nb, report)
		case "per_file", "total", "min_file":
			parseBudgetChars(k.Value, val, &nb, report)
		case "head_ratio", "tail_ratio":
			ratioLine, ratioCol = k.Line, k.Column
			parseBudgetRatio(k.Value, val, &nb, report)
		default:
			report(k.Line, k.Column, "agent-yaml-unknown-key", "unknown key budget.%s; known budget keys: %s", k.Value, strings.Join(sortedKeys(budgetKeys), ", "))
		}
	}
	if nb.HeadRatio+nb.TailRatio >= 1 {
		report(ratioLine, ratioCol, "agent-yaml-range", "budget.head_ratio + budget.tail_ratio is %g; it must stay below 1 to leave room for the truncation marker", nb.HeadRatio+nb.TailRatio)
		return
	}
	*b = nb
}

// parseBudgetChars sets the size in chars budget.key gives in b when val
// is a whole number of chars it takes (min_file may be 0).
func parseBudgetChars(key string, val *yaml.Node, b *Budget, report reportFunc) {
	if val.Kind == yaml.ScalarNode && val.ShortTag() == "!!float" {
		report(val.Line, val.Column, "agent-yaml-value", "budget.%s must be a whole number of %s, not %s", key, b.Unit, val.Value)
		return
	}
	var n int
	if !decodeScalar(val, &n, report, "budget."+key) {
		return
	}
	if n < 0 || n == 0 && key != "min_file" {
		report(val.Line, val.Column, "agent-yaml-range", "budget.%s must be positive, not %d", key, n)
		return
	}
	if b.Unit == UnitTokens {
		setBudgetTokens(key, n, b)
		return
	}
	switch key {
	case "per_file":
		b.PerFileChars = n
	case "total":
		b.TotalChars = n
	case "min_file":
		b.MinFileChars = n
	}
}

// parseBudgetRatio sets the ratio budget.key gives in b when val is
// between 0 and 1 (exclusive).
func parseBudgetRatio(key string, val *yaml.Node, b *Budget, report reportFunc) {
	var f float64
	if !decodeScalar(val, &f, report, "budget."+key) {
		return
	}
	if !(f > 0 && f < 1) {
		report(val.Line, val.Column, "agent-yaml-range", "budget.%s must be between 0 and 1 (exclusive), not %g", key, f)
		return
	}
	if key == "head_ratio" {
		b.HeadRatio = f
	} else {
		b.TailRatio = f
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// yamlErrorLine is the line a YAML parser error names (0: none).
func yamlErrorLine(err error) int {
	line, _ := workspace.YAMLMessage(err, 0)
	return line
}

// trimYAMLError is a YAML parser error in plain words, without its line
// (the problem carries it).
func trimYAMLError(err error) string {
	_, msg := workspace.YAMLMessage(err, 0)
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i >= 0 && !strings.Contains(rest[i+2:], "; line ") {
			msg = rest[i+2:]
		}
	}
	return msg
}

// nodeKind names a YAML node's kind for messages.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}
