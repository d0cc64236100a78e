package skills

import (
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/quirehq/quire/prompt"
)

// WorkspaceSources returns the two workspace tiers of the agent whose
// directory in fsys is agentDir ("." for the root), with prefixes relative
// to fsys's root, followed by the built-in tier. It is what `quire check`,
// the git endpoint and the language server lint.
func WorkspaceSources(fsys fs.FS, agentDir string) []Source {
	var out []Source
	agent, _ := fs.Sub(fsys, agentDir)
	for _, t := range []struct {
		tier Tier
		dir  string
	}{{TierWorkspace, "skills"}, {TierWorkspaceAgents, ".agents/skills"}} {
		p := path.Join(agentDir, t.dir)
		sub, err := fs.Sub(fsys, p)
		if err != nil {
			continue
		}
		out = append(out, Source{Tier: t.tier, FS: sub, Prefix: p, agent: agent})
	}
	return append(out, builtinSource())
}

// CheckAgent returns the SKILL.md problems of one agent workspace as
// prompt.Problems, paths relative to fsys's root: every front-matter error
// and warning of skills/ and .agents/skills/, a warning on a skill that
// skills/ shadows in .agents/skills/, and an info where a workspace skill
// overrides a built-in one. Errors mean the skill will not load; the git
// endpoint refuses a push that has any.
func CheckAgent(fsys fs.FS, agentDir string) []prompt.Problem {
	set := Load(0, WorkspaceSources(fsys, agentDir), nil)
	var out []prompt.Problem
	out = append(out, set.Problems()...)
	for _, sh := range set.Shadows() {
		sev := prompt.SeverityWarning
		msg := fmt.Sprintf("skill %q here is shadowed by %s, which wins; delete one of them", sh.Slug, sh.Winner)
		p := sh.Shadowed
		if sh.ShadowedTier == TierBuiltin {
			sev, p = prompt.SeverityInfo, sh.Winner
			msg = fmt.Sprintf("skill %q overrides Quire's built-in skill of the same name", sh.Slug)
		}
		out = append(out, prompt.Problem{Path: p, Severity: sev, Code: "skill-shadowed", Message: msg})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out
}
