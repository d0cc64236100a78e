package agent

import (
	"io/fs"
	"path/filepath"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// SkillOptions say where the skill tiers of an agent are besides its own
// directory of the tree.
type SkillOptions struct {
	// Shared are the tiers every agent has besides its workspace's and
	// the built-ins: ~/.agents/skills and the managed directory
	// (SharedSkills).
	Shared []skills.Source
	// Dir is the directory on disk of the tree the agent was found in,
	// "" for a tree that is not on disk (a commit). A workspace skill's
	// {baseDir} then names its directory on disk.
	Dir string
	// Version numbers the set (skills.Set.Version): a later load of the
	// same agent has a higher one.
	Version uint64
}

// SharedSkills are the skill tiers every agent has besides its own and
// the built-ins: home's ~/.agents/skills and the managed directory, each
// when given.
func SharedSkills(home, managed string) []skills.Source {
	return skills.Options{HomeDir: home, ManagedDir: managed, NoBuiltin: true}.Sources()
}

// SkillSources returns the skill tiers of agent a of the tree fsys: its
// skills/ and .agents/skills/ (paths in problems relative to fsys's root),
// the shared tiers of o and the built-in skills.
func SkillSources(fsys fs.FS, a *prompt.Agent, o SkillOptions) []skills.Source {
	srcs := skills.WorkspaceSources(fsys, a.Dir)
	if o.Dir != "" {
		for i := range srcs {
			if srcs[i].Tier != skills.TierBuiltin {
				srcs[i].Dir = filepath.Join(o.Dir, filepath.FromSlash(srcs[i].Prefix))
			}
		}
	}
	return append(srcs, o.Shared...)
}

// Skills loads the skill set of agent a of the tree fsys (SkillSources):
// the one assembly of tiers into a set, for the daemon's deployments, the
// check of an allow list, the language server and the CLI, so each sees
// the skills the others do.
func Skills(fsys fs.FS, a *prompt.Agent, o SkillOptions) *skills.Set {
	return skills.Load(o.Version, SkillSources(fsys, a, o))
}
