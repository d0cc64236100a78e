package skills

import (
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// Load reads every source (highest tier first) and resolves overrides into
// an immutable Set with the given version. Problems of every file, the
// shadowed ones included, are kept in the Set.
func Load(version uint64, sources []Source) *Set {
	sorted := append([]Source(nil), sources...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Tier < sorted[j].Tier })
	var winners map[string]*Skill // made once a second tier has skills
	var list []*Skill             // the winners, highest tier first, each tier in path order
	var shadows []Shadow
	var problems []workspace.Problem
	for _, src := range sorted {
		tier, probs := readTier(src)
		problems = append(problems, probs...)
		if len(tier) == 0 {
			continue
		}
		if list == nil { // the first tier with skills: its slugs are unique
			list = tier
			continue
		}
		if winners == nil {
			winners = make(map[string]*Skill, len(list)+len(tier))
			for _, s := range list {
				winners[s.Slug] = s
			}
		}
		for _, s := range tier {
			if w, ok := winners[s.Slug]; ok {
				shadows = append(shadows, Shadow{Slug: s.Slug, Winner: w.Path, WinnerTier: w.Tier, Shadowed: s.Path, ShadowedTier: s.Tier})
				continue
			}
			winners[s.Slug] = s
			list = append(list, s)
		}
	}
	problems = quietUnknownKeys(sorted, problems)
	if list == nil {
		list = []*Skill{}
	}
	// Nearly sorted already (a tier's skills come in path order).
	slices.SortFunc(list, func(a, b *Skill) int { return strings.Compare(a.Slug, b.Slug) })
	sort.SliceStable(shadows, func(i, j int) bool { return shadows[i].Slug < shadows[j].Slug })
	return newSet(version, list, shadows, problems)
}

// quietUnknownKeys drops the unknown-key warnings when the agent workspace
// of the sources says skill_unknown_keys: ignore in its agent.yaml. The
// file is read only when there is a warning to drop.
func quietUnknownKeys(sources []Source, problems []workspace.Problem) []workspace.Problem {
	var agent fs.FS
	for _, src := range sources {
		if src.agent != nil {
			agent = src.agent
			break
		}
	}
	if agent == nil || !slices.ContainsFunc(problems, func(p workspace.Problem) bool { return p.Code == codeUnknownKey }) {
		return problems
	}
	data, err := fs.ReadFile(agent, workspace.ConfigFile)
	if err != nil {
		return problems
	}
	if cfg, _ := prompt.ParseConfig(workspace.ConfigFile, "", data); cfg.SkillUnknownKeys != prompt.SkillKeysIgnore {
		return problems
	}
	return slices.DeleteFunc(problems, func(p workspace.Problem) bool { return p.Code == codeUnknownKey })
}

// Check loads the sources and returns every SKILL.md problem plus a warning
// per shadowed skill, sorted by path and line: what `quire check` reports.
func Check(sources []Source) []workspace.Problem {
	set := Load(0, sources)
	out := append([]workspace.Problem(nil), set.Problems()...)
	for _, sh := range set.Shadows() {
		out = append(out, workspace.Problem{Path: sh.Shadowed, Line: 0, Severity: workspace.SeverityWarning, Code: "skill-shadowed", Message: fmt.Sprintf("skill %q is shadowed by %s (%s tier)", sh.Slug, sh.Winner, sh.WinnerTier)})
	}
	return sortProblems(out)
}
