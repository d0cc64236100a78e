package skills

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits of the SKILL.md front matter (the Agent Skills format).
const (
	MaxNameChars        = 64
	MaxDescriptionChars = 1024
)

// Severity says whether a Problem stops a skill from loading.
type Severity string

// Severities of a Problem. A SKILL.md with an Error is not loaded (a lower
// tier's skill of the same slug, if any, stays in effect); a Warning is
// reported and the skill loads.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Problem is one finding about a SKILL.md file, for `quire check`, the
// language server and `quire skills list`.
type Problem struct {
	// Path names the file: relative to the workspace for the workspace
	// tiers ("skills/pdf/SKILL.md"), absolute for ~/.agents/skills and the
	// managed directory, "builtin/<slug>/SKILL.md" for built-ins.
	Path string `json:"path"`
	// Line is the 1-based line the problem is on (0 when it concerns the
	// file as a whole).
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	// Code is a stable identifier: skill-front-matter, skill-unknown-key,
	// skill-too-large, skill-read or skill-shadowed.
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String formats the problem as path:line: severity: message.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", p.Path, p.Line, p.Severity, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", p.Path, p.Severity, p.Message)
}

// FrontMatter is the parsed head of a SKILL.md.
type FrontMatter struct {
	// Name is the skill's name, equal to its directory slug.
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// License is the optional licence name or file.
	License string
	// AllowedTools lists the tools the skill may use; the front matter may
	// give them as a list or as one space-separated string.
	AllowedTools []string
	// Metadata holds the optional free-form metadata mapping.
	Metadata map[string]any
}

// Document is a parsed SKILL.md: its front matter, its body (with
// {baseDir} not yet replaced) and the line the body starts on.
type Document struct {
	FrontMatter
	Body     string
	BodyLine int
}

var (
	nameRE      = regexp.MustCompile(`^[a-z0-9-]+$`)
	yamlLineRE  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	knownFields = []string{"name", "description", "license", "allowed-tools", "metadata"}
)

// ParseDocument parses the text of a SKILL.md whose directory is slug.
// Problems carry path and line numbers of the original file (a UTF-8 BOM and
// CRLF line endings are accepted). The Document is meaningful only when no
// problem is an Error. ParseDocument never panics, whatever the input.
func ParseDocument(path, slug string, data []byte) (Document, []Problem) {
	var doc Document
	var probs []Problem
	add := func(line int, sev Severity, format string, args ...any) {
		code := "skill-front-matter"
		if strings.HasPrefix(format, "unknown key") {
			code = "skill-unknown-key"
		}
		probs = append(probs, Problem{Path: path, Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) {
		add(0, Error, "SKILL.md is not valid UTF-8")
		return doc, probs
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\n") != "---" {
		first := strings.TrimSpace(lines[0])
		switch {
		case strings.TrimSpace(text) == "":
			add(1, Error, "SKILL.md is empty; it must start with YAML front matter between --- lines holding name and description")
		case strings.HasPrefix(first, "{"):
			add(1, Error, "front matter must be YAML between --- lines, not a bare JSON object; put --- on the first line and after the object")
		default:
			add(1, Error, "SKILL.md has no front matter: the first line must be --- followed by name and description and a closing ---")
		}
		return doc, probs
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t\n"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		add(1, Error, "front matter opened on line 1 is never closed: add a line --- after it")
		return doc, probs
	}
	doc.Body = strings.Join(lines[end+1:], "")
	doc.BodyLine = end + 2
	head := strings.Join(lines[1:end], "")

	var root yaml.Node
	if err := yaml.Unmarshal([]byte(head), &root); err != nil {
		line, msg := yamlErrorLine(err.Error())
		add(line+1, Error, "front matter is not valid YAML: %s", msg) // +1: the front matter starts on line 2
		return doc, probs
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		add(1, Error, "front matter is empty; it needs name and description")
		return doc, probs
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		add(m.Line+1, Error, "front matter must be a YAML mapping of keys (name, description, …), not a %s", kindName(m.Kind))
		return doc, probs
	}
	seen := map[string]int{}
	var nameLine, descLine int
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + 1
		key := k.Value
		if k.Kind != yaml.ScalarNode {
			add(line, Error, "front matter keys must be plain words")
			continue
		}
		if prev, dup := seen[key]; dup {
			add(line, Error, "key %q appears twice (first on line %d)", key, prev)
			continue
		}
		seen[key] = line
		switch key {
		case "name":
			nameLine = line
			doc.Name = scalarString(v, key, line, add)
		case "description":
			descLine = line
			doc.Description = scalarString(v, key, line, add)
		case "license":
			doc.License = scalarString(v, key, line, add)
		case "allowed-tools":
			doc.AllowedTools = toolList(v, line, add)
		case "metadata":
			if v.Kind != yaml.MappingNode {
				add(line, Error, "metadata must be a mapping of keys to values, not a %s", kindName(v.Kind))
				continue
			}
			var md map[string]any
			if err := v.Decode(&md); err != nil {
				add(line, Error, "metadata: %v", err)
				continue
			}
			doc.Metadata = md
		default:
			add(line, Warning, "unknown key %q is ignored (known keys: %s)", key, strings.Join(knownFields, ", "))
		}
	}
	switch n := utf8.RuneCountInString(doc.Name); {
	case nameLine == 0:
		add(1, Error, "front matter has no name; add name: %s", suggestName(slug))
	case n == 0:
		add(nameLine, Error, "name is empty; use the directory name %q", slug)
	case n > MaxNameChars:
		add(nameLine, Error, "name is %d characters; the limit is %d", n, MaxNameChars)
	case !nameRE.MatchString(doc.Name):
		add(nameLine, Error, "name %q may only hold lower-case letters a-z, digits and hyphens", doc.Name)
	case doc.Name != slug:
		add(nameLine, Error, "name %q differs from its directory %q; rename one so they match", doc.Name, slug)
	case strings.HasPrefix(doc.Name, "-") || strings.HasSuffix(doc.Name, "-") || strings.Contains(doc.Name, "--"):
		add(nameLine, Warning, "name %q should not start or end with a hyphen or hold two in a row", doc.Name)
	}
	switch n := utf8.RuneCountInString(doc.Description); {
	case descLine == 0:
		add(1, Error, "front matter has no description; say in one or two sentences what the skill does and when to use it")
	case strings.TrimSpace(doc.Description) == "":
		add(descLine, Error, "description is empty; say what the skill does and when to use it")
	case n > MaxDescriptionChars:
		add(descLine, Error, "description is %d characters; the limit is %d", n, MaxDescriptionChars)
	}
	return doc, probs
}

type addFunc func(line int, sev Severity, format string, args ...any)

func scalarString(v *yaml.Node, key string, line int, add addFunc) string {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.ScalarNode {
		add(line, Error, "%s must be a string, not a %s", key, kindName(v.Kind))
		return ""
	}
	if v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

func toolList(v *yaml.Node, line int, add addFunc) []string {
	switch v.Kind {
	case yaml.ScalarNode:
		return strings.Fields(v.Value)
	case yaml.SequenceNode:
		var out []string
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode {
				add(c.Line+1, Error, "allowed-tools entries must be tool names")
				continue
			}
			out = append(out, c.Value)
		}
		return out
	}
	add(line, Error, "allowed-tools must be a list of tool names or one space-separated string, not a %s", kindName(v.Kind))
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		return "plain value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// suggestName returns slug when it is a valid name, else a placeholder.
func suggestName(slug string) string {
	if nameRE.MatchString(slug) && len(slug) <= MaxNameChars {
		return slug
	}
	return "<directory-name>"
}

// yamlParserProblems are the messages yaml.v3's parser (as opposed to its
// scanner) reports; for them it gives a 0-based line, and none at all for
// the first line.
var yamlParserProblems = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
}

// yamlErrorLine returns the 1-based line within the YAML text that a yaml.v3
// error names, and the message without its prefix.
func yamlErrorLine(err string) (int, string) {
	msg := strings.TrimPrefix(err, "yaml: ")
	line := 0
	if m := yamlLineRE.FindStringSubmatch(err); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	for _, p := range yamlParserProblems {
		if strings.HasPrefix(msg, p) {
			return line + 1, msg
		}
	}
	return max(line, 1), msg
}
