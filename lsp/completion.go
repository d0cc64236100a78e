package lsp

import (
	"path"
	"strings"

	"go.lsp.dev/protocol"
)

// yamlKey is a key offered by completion, with what it means.
type yamlKey struct {
	name, doc string
	block     bool // the value is a nested mapping or list
}

// agentKeys are the keys of agent.yaml (spec: behavior.md §1); budgetKeys
// those under `budget:`.
var (
	agentKeys = []yamlKey{
		{"name", "The agent's name (defaults to its directory).", false},
		{"type", "`predefined` (default: context files shared, USER.md and BOOTSTRAP.md per user) or `open` (every context file per user).", false},
		{"budget", "Character budgets: per_file, total, min_file, head_ratio, tail_ratio.", true},
		{"policy", "`truncate` (default) or `reject`: refuse a push that makes a context file exceed its per-file budget.", false},
		{"order", "The order in which context files are charged against the total budget.", true},
		{"skills", "Allow list of skills: absent = all, `[]` = none.", true},
		{"identity", "The first line of the system prompt.", false},
		{"write_limit_bytes", "Largest write through the API, in bytes (default 16384).", false},
		{"daily_log_retention_days", "Days of memory/YYYY-MM-DD.md kept (default 30, 0 = keep all).", false},
		{"timezone", "IANA time zone for daily logs, e.g. Europe/Berlin.", false},
	}
	budgetKeys = []yamlKey{
		{"per_file", "Characters (code points) one context file may inject (default 20000).", false},
		{"total", "Characters all context files together may inject (default 24000).", false},
		{"min_file", "Below this remaining total budget, later files are dropped (default 64).", false},
		{"head_ratio", "Share of a truncated file kept from its start (default 0.7).", false},
		{"tail_ratio", "Share of a truncated file kept from its end (default 0.2).", false},
	}
	skillKeys = []yamlKey{
		{"name", "The skill's name: at most 64 chars of a-z, 0-9 and -, equal to its directory.", false},
		{"description", "What the skill does and when to use it (at most 1,024 chars); the model sees it.", false},
		{"metadata", "Free-form metadata.", true},
	}
)

// completion offers YAML keys in agent.yaml and in a SKILL.md's front
// matter at pos; elsewhere it offers nothing.
func completion(name, src string, pos protocol.Position) []protocol.CompletionItem {
	m := newMapper(src)
	off := m.offset(pos)
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	prefix := src[lineStart:off]
	if strings.Contains(prefix, ":") || strings.HasPrefix(strings.TrimSpace(prefix), "#") || strings.HasPrefix(strings.TrimSpace(prefix), "-") {
		return []protocol.CompletionItem{} // a value, a comment or a list item
	}
	indent := len(prefix) - len(strings.TrimLeft(prefix, " \t"))
	var keys []yamlKey
	var body string // the YAML the keys go into, to leave out keys already there
	switch base := path.Base(name); {
	case base == "agent.yaml":
		body = src
		keys = agentKeys
		if indent > 0 {
			if parentKey(src[:lineStart], indent) != "budget" {
				return []protocol.CompletionItem{}
			}
			keys = budgetKeys
		}
	case base == "SKILL.md":
		fm := frontMatterEnd(src)
		if fm == 0 || off < strings.IndexByte(src, '\n')+1 || off >= fm || indent > 0 {
			return []protocol.CompletionItem{}
		}
		body = src[:fm]
		keys = skillKeys
	default:
		return []protocol.CompletionItem{}
	}
	present := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && len(k)-len(strings.TrimLeft(k, " ")) == indent {
			present[strings.TrimSpace(k)] = true
		}
	}
	items := []protocol.CompletionItem{}
	for _, k := range keys {
		if present[k.name] {
			continue
		}
		insert := k.name + ": "
		if k.block {
			insert = k.name + ":\n" + strings.Repeat(" ", indent+2)
		}
		items = append(items, protocol.CompletionItem{
			Label:         k.name,
			Kind:          protocol.CompletionItemKindProperty,
			Detail:        protocol.NewOptional(path.Base(name) + " key"),
			Documentation: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: k.doc},
			InsertText:    protocol.NewOptional(insert),
		})
	}
	return items
}

// parentKey is the key of the nearest line above (in before) that is
// indented less than indent.
func parentKey(before string, indent int) string {
	lines := strings.Split(strings.TrimRight(before, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if in := len(line) - len(strings.TrimLeft(line, " \t")); in < indent {
			k, _, _ := strings.Cut(strings.TrimSpace(line), ":")
			return k
		}
	}
	return ""
}
