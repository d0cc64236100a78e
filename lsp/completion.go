package lsp

import (
	"path"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// yamlKey is a key offered by completion, with what it means.
type yamlKey struct {
	name, doc string
	block     bool // the value is a nested mapping or list
}

// agentKeys are the keys of agent.yaml and budgetKeys those under
// `budget:`, from the prompt package's own list; skillKeys are SKILL.md's
// front-matter keys.
var (
	agentKeys, budgetKeys = configKeys()
	skillKeys             = []yamlKey{
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
	case base == workspace.ConfigFile:
		body = src
		keys = agentKeys
		if indent > 0 {
			if parentKey(src[:lineStart], indent) != "budget" {
				return []protocol.CompletionItem{}
			}
			keys = budgetKeys
		}
	case base == workspace.SkillFile:
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

// blockKeys are agent.yaml keys whose value is a mapping or a list.
var blockKeys = map[string]bool{"budget": true, "order": true, "skills": true}

// configKeys splits prompt.ConfigKeys into top-level and budget keys,
// sorted by name.
func configKeys() (top, budget []yamlKey) {
	for k, doc := range prompt.ConfigKeys() {
		if sub, ok := strings.CutPrefix(k, "budget."); ok {
			budget = append(budget, yamlKey{name: sub, doc: doc})
			continue
		}
		top = append(top, yamlKey{name: k, doc: doc, block: blockKeys[k]})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].name < top[j].name })
	sort.Slice(budget, func(i, j int) bool { return budget[i].name < budget[j].name })
	return top, budget
}
