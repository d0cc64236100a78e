package skills

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// WorkspaceSources returns the two workspace tiers of the agent whose
// directory in fsys is agentDir ("." for the root), with prefixes relative
// to fsys's root, followed by the built-in tier. It is what `quire check`,
// the git endpoint and the language server lint. A tree on disk as it is
// (a workspace.Dir) is read from the disk directly, as Options.Sources
// reads WorkspaceDir.
func WorkspaceSources(fsys fs.FS, agentDir string) []Source {
	agent, _ := fs.Sub(fsys, agentDir)
	diskRoot := ""
	if d, ok := fsys.(*workspace.Dir); ok {
		if abs, err := filepath.Abs(d.Name()); err == nil {
			diskRoot = abs
		}
	}
	return append(workspaceTiers(fsys, agentDir, agent, diskRoot, true), builtinSource())
}

// CheckAgent returns the SKILL.md problems of one agent workspace as
// workspace.Problems, paths relative to fsys's root: every front-matter error
// and warning of skills/ and .agents/skills/, a warning on a skill that
// skills/ shadows in .agents/skills/, and an info where a workspace skill
// overrides a built-in one. Errors mean the skill will not load; the git
// endpoint refuses a push that has any.
func CheckAgent(fsys fs.FS, agentDir string) []workspace.Problem {
	set := Load(0, WorkspaceSources(fsys, agentDir))
	var out []workspace.Problem
	out = append(out, set.Problems()...)
	for _, sh := range set.Shadows() {
		sev := workspace.SeverityWarning
		msg := fmt.Sprintf("skill %q here is shadowed by %s, which wins; delete one of them", sh.Slug, sh.Winner)
		p := sh.Shadowed
		if sh.ShadowedTier == TierBuiltin {
			sev, p = workspace.SeverityInfo, sh.Winner
			msg = fmt.Sprintf("skill %q overrides Quire's built-in skill of the same name", sh.Slug)
		}
		out = append(out, workspace.Problem{Path: p, Severity: sev, Code: "skill-shadowed", Message: msg})
	}
	return sortProblems(out)
}

// sortProblems sorts problems by path, then line, as check prints them.
func sortProblems(out []workspace.Problem) []workspace.Problem {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// maxKnownShown bounds the skill names an unknown-name warning lists.
const maxKnownShown = 12

// UnknownAllowed warns about each name in agent a's allow list
// (agent.yaml skills:) that matches no skill of s, the agent's skills
// (agent.Skills): such a name allows nothing, and a list of nothing else
// silently turns every skill off. Each warning points at the name in
// agent.yaml and lists the known skills. `quire check`, the push and the
// deploy report say them.
func (s *Set) UnknownAllowed(a *prompt.Agent) []workspace.Problem {
	var out []workspace.Problem
	for i, name := range a.Config.Skills {
		if _, ok := s.Skill(name); ok {
			continue
		}
		p := workspace.Problem{Path: path.Join(a.Dir, workspace.ConfigFile), Severity: workspace.SeverityWarning, Code: "skill-unknown",
			Message: fmt.Sprintf("skills: %q matches no skill; known: %s", name, knownSkills(s))}
		if i < len(a.Config.SkillsAt) {
			p.Line, p.Column = a.Config.SkillsAt[i].Line, a.Config.SkillsAt[i].Column
		}
		out = append(out, p)
	}
	return out
}

// knownSkills lists the slugs of set, the first maxKnownShown of them.
func knownSkills(set *Set) string {
	all := set.Skills()
	if len(all) == 0 {
		return "none"
	}
	n := min(len(all), maxKnownShown)
	names := make([]string, n)
	for i, sk := range all[:n] {
		names[i] = sk.Slug
	}
	s := strings.Join(names, ", ")
	if len(all) > n {
		s += fmt.Sprintf(" and %d more ('quire skills list' shows them)", len(all)-n)
	}
	return s
}
