package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/quirehq/quire/workspace"
)

// CodeGrants is the Problem code of everything wrong in a grants file.
const CodeGrants = "skill-grants"

// GrantEntry is one skill's entry in a grants file.
type GrantEntry struct {
	Skill string
	Line  int
	Grant Grant
}

// grantsParser collects the entries and problems of one grants file.
type grantsParser struct {
	path  string
	out   []GrantEntry
	probs []workspace.Problem
}

func (p *grantsParser) errorf(line int, format string, args ...any) {
	p.probs = append(p.probs, workspace.Problem{Path: p.path, Line: line, Severity: workspace.SeverityError, Code: CodeGrants, Message: fmt.Sprintf(format, args...)})
}

// ParseGrants parses a grants file (path names it in problems): a mapping
// of skill names to {agents: [...], repositories: [...]}. Problems name
// the line and what to write instead; entries with a problem are left out.
func ParseGrants(path string, data []byte) ([]GrantEntry, []workspace.Problem) {
	p := &grantsParser{path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlErrorLine(err.Error())
		p.errorf(line, "%s is not valid YAML: %s; write one mapping of skill names to agents: and repositories: lists", path, msg)
		return nil, p.probs
	}
	if len(doc.Content) == 0 {
		return nil, nil // empty file: no grants
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		p.errorf(top.Line, "the grants file must be a mapping of skill names to grants (skill: {agents: [...], repositories: [...]}), not a %s", kindName(top.Kind))
		return nil, p.probs
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			p.errorf(k.Line, "skill %q is granted twice (first on line %d); merge the two entries", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		if g, ok := p.grant(k.Value, v); ok {
			p.out = append(p.out, GrantEntry{Skill: k.Value, Line: k.Line, Grant: g})
		}
	}
	return p.out, p.probs
}

// grant reads the grant of skill from v.
func (p *grantsParser) grant(skill string, v *yaml.Node) (Grant, bool) {
	var g Grant
	if v.Kind != yaml.MappingNode {
		p.errorf(v.Line, "the grant of %q must be a mapping with agents: and/or repositories: lists, not a %s", skill, kindName(v.Kind))
		return g, false
	}
	ok := true
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, list := v.Content[i], v.Content[i+1]
		var dst *[]string
		switch k.Value {
		case "agents":
			dst = &g.Agents
		case "repositories":
			dst = &g.Repositories
		default:
			p.errorf(k.Line, "%q in the grant of %q is unknown; use agents: or repositories:", k.Value, skill)
			ok = false
			continue
		}
		names, good := p.names(skill, k.Value, list)
		*dst, ok = append(*dst, names...), ok && good
	}
	return g, ok
}

// names reads a list of agent or repository names.
func (p *grantsParser) names(skill, key string, v *yaml.Node) ([]string, bool) {
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, "%s of %q must be a list of names ([a, b]), not a %s", key, skill, kindName(v.Kind))
		return nil, false
	}
	var out []string
	for _, c := range v.Content {
		if c.Kind != yaml.ScalarNode || c.Value == "" {
			p.errorf(c.Line, "%s of %q must hold names only", key, skill)
			return nil, false
		}
		out = append(out, c.Value)
	}
	return out, true
}

// SharedSource returns the shared skills repository fsys (skills at
// <slug>/SKILL.md, grants in GrantsFile at its root) as the managed tier,
// prefix naming it in problems and locations, with the grants file's
// problems.
func SharedSource(fsys fs.FS, prefix string) (Source, []GrantEntry, []workspace.Problem) {
	src := Source{Tier: TierManaged, FS: fsys, Prefix: prefix, Shared: true, Grants: map[string]Grant{}}
	data, err := fs.ReadFile(fsys, workspace.GrantsFile)
	shown := path.Join(prefix, workspace.GrantsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return src, nil, nil
	}
	if err != nil {
		return src, nil, []workspace.Problem{{Path: shown, Severity: workspace.SeverityError, Code: CodeGrants, Message: fmt.Sprintf("read the grants file: %v", err)}}
	}
	entries, probs := ParseGrants(shown, data)
	for _, e := range entries {
		src.Grants[e.Skill] = e.Grant
	}
	return src, entries, probs
}

// CheckShared returns the problems of the shared skills repository fsys:
// every SKILL.md problem (an unknown visibility among them), the grants
// file's, a grant naming a skill the repository does not hold (an error),
// a grant of a skill that is not private and a private skill granted to
// nobody (warnings). The git endpoint refuses a push with an error.
func CheckShared(fsys fs.FS, prefix string) []workspace.Problem {
	src, entries, probs := SharedSource(fsys, prefix)
	set := Load(0, []Source{src})
	probs = append(probs, set.Problems()...)
	shown := path.Join(prefix, workspace.GrantsFile)
	for _, e := range entries {
		sk, ok := set.Skill(e.Skill)
		switch {
		case !ok:
			probs = append(probs, workspace.Problem{Path: shown, Line: e.Line, Severity: workspace.SeverityError, Code: CodeGrants,
				Message: fmt.Sprintf("grants name skill %q, which this repository does not hold (known: %s); add %s or remove the entry", e.Skill, knownSkills(set), path.Join(e.Skill, workspace.SkillFile))})
		case sk.Access.Visibility != Private:
			probs = append(probs, workspace.Problem{Path: shown, Line: e.Line, Severity: workspace.SeverityWarning, Code: CodeGrants,
				Message: fmt.Sprintf("skill %q is %s, so every agent sees it and this grant changes nothing; set visibility: private in its SKILL.md or remove the entry", e.Skill, visibilityName(sk.Access.Visibility))})
		}
	}
	for _, sk := range set.Skills() {
		if sk.Access.Visibility == Private && !slices.ContainsFunc(entries, func(e GrantEntry) bool { return e.Skill == sk.Slug }) {
			probs = append(probs, workspace.Problem{Path: sk.Path, Severity: workspace.SeverityWarning, Code: CodeGrants,
				Message: fmt.Sprintf("private skill %q is granted to nobody, so no agent sees it; name agents or repositories for it in %s", sk.Slug, workspace.GrantsFile)})
		}
	}
	return sortProblems(probs)
}

// visibilityName names v, the empty visibility as public.
func visibilityName(v Visibility) string {
	if v == "" {
		return string(Public)
	}
	return string(v)
}
