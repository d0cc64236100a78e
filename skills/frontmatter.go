package skills

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/quirehq/quire/workspace"
)

// Limits of the SKILL.md front matter (the Agent Skills format).
const (
	MaxNameChars        = 64
	MaxDescriptionChars = 1024
)

// FrontMatter is the parsed head of a SKILL.md.
type FrontMatter struct {
	// Name is the skill's name. A loaded Skill's Name is its directory
	// slug, which wins over a different name in the front matter.
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// License is the optional licence name or file.
	License string
	// Compatibility states the environment the skill needs (Agent Skills
	// specification; at most MaxCompatibilityChars).
	Compatibility string
	// AllowedTools lists the tools the skill may use; the front matter may
	// give them as a list or as one space-separated string.
	AllowedTools []string
	// Metadata holds the optional free-form metadata mapping.
	Metadata map[string]any
	// Visibility says who may use a skill of the shared skills
	// repository: public (the default), internal or private (Access).
	Visibility Visibility
}

// MaxCompatibilityChars bounds the compatibility key (Agent Skills
// specification); a longer one is a warning.
const MaxCompatibilityChars = 500

// Document is a parsed SKILL.md: its front matter, its body (with
// {baseDir} not yet replaced) and the line the body starts on.
type Document struct {
	FrontMatter
	Body     string
	BodyLine int
}

var (
	yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// codeUnknownKey is the Problem code of a front-matter key Quire does not
// know.
const codeUnknownKey = "skill-unknown-key"

// knownFields are the front-matter keys Quire reads or knows to be
// written by the ecosystem, so they are no "unknown key" warning:
//   - the Agent Skills specification: name, description, license,
//     compatibility, metadata, allowed-tools;
//   - Claude Code: argument-hint, disable-model-invocation,
//     user-invocable, model, context, agent, hooks;
//   - OpenClaw and its ClawHub registry: homepage, command-dispatch,
//     command-tool, command-arg-mode, version (metadata.openclaw and its
//     aliases live under metadata, which is free-form).
var knownFields = []string{
	"name", "description", "license", "compatibility", "metadata", "allowed-tools", "visibility",
	"argument-hint", "disable-model-invocation", "user-invocable", "model", "context", "agent", "hooks",
	"homepage", "command-dispatch", "command-tool", "command-arg-mode", "version",
}

// readFields are the keys whose values Quire interprets; the other known
// keys are accepted whatever their value.
var readFields = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools", "visibility"}

// KnownFields returns the front-matter keys that draw no unknown-key
// warning (for editor completion).
func KnownFields() []string { return append([]string(nil), knownFields...) }

func isKnownField(key string) bool {
	for _, k := range knownFields {
		if k == key {
			return true
		}
	}
	return false
}

// ParseDocument parses the text of a SKILL.md whose directory is slug.
// Problems carry path and line numbers of the original file (a UTF-8 BOM and
// CRLF line endings are accepted). The Document is meaningful only when no
// problem is an Error. ParseDocument never panics, whatever the input.
//
// Front matter made only of "key: value" lines with simple values (most
// SKILL.md files) is read by a small scanner; anything else (nested
// metadata, lists, block scalars, escapes, comments in odd places) by the
// YAML decoder. Both give the same Document and problems; a fuzz test
// holds them to that.
func ParseDocument(path, slug string, data []byte) (Document, []workspace.Problem) {
	return parseDocument(path, slug, data, true)
}

// docParser collects a Document and its problems.
type docParser struct {
	path  string
	doc   Document
	probs []workspace.Problem
	// The keys read so far, with their lines: the first few in seen0 (no
	// allocation, and no pointer into the parser itself, which would put
	// it on the heap), any more in seen.
	seen0 [8]seenKey
	nseen int
	seen  []seenKey

	nameLine, descLine int
}

func (p *docParser) add(line int, sev workspace.Severity, code, format string, args ...any) {
	p.probs = append(p.probs, workspace.Problem{Path: p.path, Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (p *docParser) errorf(line int, format string, args ...any) {
	p.add(line, workspace.SeverityError, "skill-front-matter", format, args...)
}

func parseDocument(path, slug string, data []byte, fast bool) (Document, []workspace.Problem) {
	return parseText(path, slug, string(data), fast)
}

// parseText is parseDocument of text already held as a string: Body and
// the front matter's values are substrings of it.
func parseText(path, slug, text string, fast bool) (Document, []workspace.Problem) {
	p := docParser{path: path}
	text = strings.TrimPrefix(text, "\ufeff")
	if !utf8.ValidString(text) {
		p.errorf(0, "SKILL.md is not valid UTF-8")
		return p.doc, p.probs
	}
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	rest, ok := p.opening(text)
	if !ok {
		return p.doc, p.probs
	}
	headEnd, bodyStart, line := closing(rest)
	if headEnd < 0 {
		p.errorf(1, "front matter opened on line 1 is never closed: add a line --- after it")
		return p.doc, p.probs
	}
	p.doc.Body = rest[bodyStart:]
	p.doc.BodyLine = line + 1
	head := rest[:headEnd]

	ok = false
	if fast {
		ok = p.scan(head)
	}
	if !ok {
		if !p.decode(head) {
			return p.doc, p.probs
		}
	}
	p.validate(slug)
	return p.doc, p.probs
}

// opening checks that text opens front matter with a line --- and returns
// the text after that line, or reports why it does not.
func (p *docParser) opening(text string) (rest string, ok bool) {
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		first = strings.TrimSpace(first)
		switch {
		case strings.TrimSpace(text) == "":
			p.errorf(1, "SKILL.md is empty; it must start with YAML front matter between --- lines holding name and description")
		case strings.HasPrefix(first, "{"):
			p.errorf(1, "front matter must be YAML between --- lines, not a bare JSON object; put --- on the first line and after the object")
		default:
			p.errorf(1, "SKILL.md has no front matter: the first line must be --- followed by name and description and a closing ---")
		}
		return "", false
	}
	if len(first) == len(text) { // no line break after ---
		p.errorf(1, "front matter opened on line 1 is never closed: add a line --- after it")
		return "", false
	}
	return rest, true
}

// closing finds the line closing the front matter in rest (the text after
// the opening line): --- or ... alone (trailing blanks allowed). It returns
// where that line and the body start in rest and the line's number in the
// file; headEnd is -1 when no line closes it.
func closing(rest string) (headEnd, bodyStart, line int) {
	headEnd, bodyStart, line = -1, 0, 2
	for off := 0; off < len(rest); line++ {
		nl := strings.IndexByte(rest[off:], '\n')
		end := len(rest)
		if nl >= 0 {
			end = off + nl
		}
		if l := strings.TrimRight(rest[off:end], " \t"); l == "---" || l == "..." {
			return off, min(end+1, len(rest)), line
		}
		off = end + 1
	}
	return headEnd, bodyStart, line
}

// field starts a top-level key: it reports duplicate and unknown keys and
// says whether the value should be read.
func (p *docParser) field(key string, line int) bool {
	for _, k := range p.seen0[:min(p.nseen, len(p.seen0))] {
		if k.key == key {
			p.errorf(line, "key %q appears twice (first on line %d)", key, k.line)
			return false
		}
	}
	for _, k := range p.seen {
		if k.key == key {
			p.errorf(line, "key %q appears twice (first on line %d)", key, k.line)
			return false
		}
	}
	if p.nseen < len(p.seen0) {
		p.seen0[p.nseen] = seenKey{key, line}
	} else {
		p.seen = append(p.seen, seenKey{key, line})
	}
	p.nseen++
	if !isKnownField(key) {
		p.add(line, workspace.SeverityWarning, codeUnknownKey, "unknown key %q is ignored (Quire reads %s; silence this warning with skill_unknown_keys: ignore in agent.yaml)", key, strings.Join(readFields, ", "))
		return false
	}
	return true
}

// scalar reads a top-level key whose value is a scalar (null: the YAML
// null, written as nothing, ~ or null).
func (p *docParser) scalar(key string, line int, value string, null bool) {
	if null {
		value = ""
	}
	switch key {
	case "name":
		p.nameLine, p.doc.Name = line, value
	case "description":
		p.descLine, p.doc.Description = line, value
	case "license":
		p.doc.License = value
	case "visibility":
		p.visibility(line, value)
	case "compatibility":
		p.doc.Compatibility = value
		if n := utf8.RuneCountInString(value); n > MaxCompatibilityChars {
			p.add(line, workspace.SeverityWarning, "skill-front-matter", "compatibility is %d characters; the Agent Skills specification allows %d", n, MaxCompatibilityChars)
		}
	case "allowed-tools":
		p.doc.AllowedTools = strings.Fields(value)
	case "metadata":
		if null {
			return
		}
		// OpenClaw documents metadata as one line of JSON; quoted, it is a
		// string holding a mapping.
		if t := strings.TrimSpace(value); strings.HasPrefix(t, "{") {
			if md, err := decodeMapping(t); err == nil {
				p.doc.Metadata = md
				return
			}
		}
		p.errorf(line, "metadata must be a mapping of keys to values, not a plain value")
	}
}

// decodeMapping decodes YAML (or JSON) text that holds one mapping.
func decodeMapping(text string) (map[string]any, error) {
	var md map[string]any
	err := yaml.Unmarshal([]byte(text), &md)
	if err != nil && strings.Contains(err.Error(), "invalid Unicode character escape code") {
		if fixed, ok := joinSurrogates(text); ok {
			md = nil
			err = yaml.Unmarshal([]byte(fixed), &md)
		}
	}
	if err == nil && md == nil {
		err = fmt.Errorf("not a mapping")
	}
	return md, err
}

// decode reads the head with the YAML decoder. It returns false when the
// head is not a mapping (the problem is recorded).
func (p *docParser) decode(head string) bool {
	m := p.topMapping(head)
	if m == nil {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + 1
		if k.Kind != yaml.ScalarNode {
			p.errorf(line, "front matter keys must be plain words")
			continue
		}
		if !p.field(k.Value, line) {
			continue
		}
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if v.Kind == yaml.ScalarNode {
			p.scalar(k.Value, line, v.Value, v.Tag == "!!null")
			continue
		}
		p.nonScalar(k.Value, line, v)
	}
	return true
}

// topMapping decodes the front matter into its top mapping node, or
// reports why it is not one and returns nil.
func (p *docParser) topMapping(head string) *yaml.Node {
	var root yaml.Node
	err := yaml.Unmarshal([]byte(head), &root)
	if err != nil && strings.Contains(err.Error(), "invalid Unicode character escape code") {
		// JSON writes characters beyond the BMP as surrogate pairs
		// ("\ud83d\udc19"); YAML wants one escape ("\U0001F419").
		if fixed, ok := joinSurrogates(head); ok {
			root = yaml.Node{}
			err = yaml.Unmarshal([]byte(fixed), &root)
		}
	}
	if err != nil {
		line, msg := yamlErrorLine(err.Error())
		p.errorf(line+1, "front matter is not valid YAML: %s", msg) // +1: the front matter starts on line 2
		return nil
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		p.errorf(1, "front matter is empty; it needs name and description")
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		p.errorf(m.Line+1, "front matter must be a YAML mapping of keys (name, description, …), not a %s", kindName(m.Kind))
		return nil
	}
	return m
}

// nonScalar reads the value of key, on line, that is not a scalar: the
// tool list and metadata may be one, the string fields may not.
func (p *docParser) nonScalar(key string, line int, v *yaml.Node) {
	switch key {
	case "allowed-tools":
		p.doc.AllowedTools = p.toolList(v, line)
	case "metadata":
		p.metadata(line, v)
	case "name", "description", "license", "compatibility", "visibility":
		if key == "name" {
			p.nameLine = line
		} else if key == "description" {
			p.descLine = line
		}
		p.errorf(line, "%s must be a string, not a %s", key, kindName(v.Kind))
	}
}

// visibility reads the visibility key on line: one of Visibilities, or
// nothing for public.
func (p *docParser) visibility(line int, value string) {
	v := Visibility(strings.TrimSpace(value))
	if v != "" && !slices.Contains(Visibilities(), v) {
		p.errorf(line, "visibility %q is unknown; use public, internal or private (or leave the key out for public)", value)
		return
	}
	p.doc.Visibility = v
}

// metadata reads the metadata mapping on line.
func (p *docParser) metadata(line int, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		p.errorf(line, "metadata must be a mapping of keys to values, not a %s", kindName(v.Kind))
		return
	}
	var md map[string]any
	if err := v.Decode(&md); err != nil {
		// yaml's lines count from the front matter's first line,
		// the file's second.
		at, msg := workspace.YAMLMessage(err, 1)
		if at == 0 {
			at = line
		}
		if rest, ok := strings.CutPrefix(msg, fmt.Sprintf("line %d: ", at)); ok {
			msg = rest
		}
		p.errorf(at, "metadata: %s", msg)
		return
	}
	p.doc.Metadata = md
}

// validate checks name and description once the head is read.
func (p *docParser) validate(slug string) {
	name := p.doc.Name
	switch n := runeCount(name); {
	case p.nameLine == 0:
		p.errorf(1, "front matter has no name; add name: %s", suggestName(slug))
	case name == "" && p.hasErrorOn(p.nameLine):
		// not a string: already reported
	case n == 0:
		p.errorf(p.nameLine, "name is empty; use the directory name %q", slug)
	case name != slug:
		// The directory names the skill (a skill must be findable where it
		// lives); the front matter's name only draws a warning.
		if msg := nameRule(slug); msg != "" {
			p.errorf(p.nameLine, "the directory name %q %s, and the front matter's name %q differs from it; rename the directory to a valid name and set name to match", slug, msg, name)
			break
		}
		p.add(p.nameLine, workspace.SeverityWarning, "skill-name-mismatch", "name %q differs from its directory %q; the skill loads as %q (the directory wins): rename one so they match", name, slug, slug)
	default:
		if msg := nameRule(name); msg != "" {
			p.errorf(p.nameLine, "name %q %s", name, msg)
		}
	}
	switch n := runeCount(p.doc.Description); {
	case p.descLine == 0:
		p.errorf(1, "front matter has no description; say in one or two sentences what the skill does and when to use it")
	case p.doc.Description == "" && p.hasErrorOn(p.descLine):
		// not a string: already reported
	case strings.TrimSpace(p.doc.Description) == "":
		p.errorf(p.descLine, "description is empty; say what the skill does and when to use it")
	case n > MaxDescriptionChars:
		p.errorf(p.descLine, "description is %d characters; the limit is %d", n, MaxDescriptionChars)
	default:
		// Descriptions are listed in the system prompt: a control
		// character (an escape sequence, a bell) has no place there.
		// Line breaks and tabs of folded YAML are fine.
		if i := controlAt(p.doc.Description); i >= 0 {
			r, _ := utf8.DecodeRuneInString(p.doc.Description[i:])
			p.errorf(p.descLine, "description holds the control character %U at byte %d; write plain text", r, i)
		}
	}
}

// controlAt returns the byte offset of the first control character in s
// other than a line break or a tab, or -1.
func controlAt(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		// Printable ASCII words hold none: stop at one with a byte below
		// 0x20 (a tab or a line break, maybe), DEL or a high bit.
		if w := word(s, i); w&hiBits|(w-loBits*0x20)&^w&hiBits|zeroByte(w^(loBits*0x7f)) != 0 {
			break
		}
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t' && c != '\r' {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsControl(r) {
			return i
		}
		i += n
	}
	return -1
}

func (p *docParser) hasErrorOn(line int) bool {
	for _, pr := range p.probs {
		if pr.Line == line && pr.Severity == workspace.SeverityError {
			return true
		}
	}
	return false
}

type seenKey struct {
	key  string
	line int
}

// nameChars reports whether name is non-empty and holds only a-z, 0-9
// and hyphens.
func nameChars(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return name != ""
}

// nameRule returns what is wrong with name under the Agent Skills rules,
// or "" when it is a valid name.
func nameRule(name string) string {
	switch n := runeCount(name); {
	case n > MaxNameChars:
		return fmt.Sprintf("is %d characters; the limit is %d", n, MaxNameChars)
	case !nameChars(name):
		return "may only hold lower-case letters a-z, digits and hyphens"
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "must not start or end with a hyphen"
	case strings.Contains(name, "--"):
		return "must not hold two hyphens in a row"
	}
	return ""
}

func (p *docParser) toolList(v *yaml.Node, line int) []string {
	if v.Kind == yaml.SequenceNode {
		var out []string
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode {
				p.errorf(c.Line+1, "allowed-tools entries must be tool names")
				continue
			}
			out = append(out, c.Value)
		}
		return out
	}
	p.errorf(line, "allowed-tools must be a list of tool names or one space-separated string, not a %s", kindName(v.Kind))
	return nil
}

// joinSurrogates rewrites JSON-style UTF-16 surrogate pairs ("\ud83d\udc19")
// into YAML's 32-bit escape ("\U0001F419"). It reports whether it changed
// anything; a lone surrogate stays (and stays an error).
func joinSurrogates(s string) (string, bool) {
	var b strings.Builder
	changed := false
	last := 0
	for i := 0; i+12 <= len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		hi, ok1 := hex4(s, i+1)
		if !ok1 || hi < 0xD800 || hi > 0xDBFF || s[i+6] != '\\' {
			i++ // skip the escaped character (it may be a backslash)
			continue
		}
		lo, ok2 := hex4(s, i+7)
		if !ok2 || lo < 0xDC00 || lo > 0xDFFF {
			i++
			continue
		}
		r := 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)
		b.WriteString(s[last:i])
		fmt.Fprintf(&b, "\\U%08X", r)
		last = i + 12
		i += 11
		changed = true
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// hex4 reads "uXXXX" at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+5 > len(s) || s[i] != 'u' { // JSON escapes are lower-case \u
		return 0, false
	}
	n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
	return rune(n), err == nil
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
	if nameChars(slug) && len(slug) <= MaxNameChars {
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
