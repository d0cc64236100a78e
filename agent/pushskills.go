package agent

import (
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// changedSkillsCheck lints, of each agent's skills, only those with a
// file among paths (the files a push adds or modifies): a push of one
// skill in a workspace of 2,000 reads one SKILL.md, not 2,000. A skill's
// errors come from its own files alone, and the tree before the push
// passed the same check, so the push's errors are the changed skills'.
// (Warnings that compare skills, such as shadowing, are not a push's
// business: WorkspaceChecks keeps errors only.)
func changedSkillsCheck(paths []string) func(fs.FS, string) []workspace.Problem {
	return func(fsys fs.FS, agentDir string) []workspace.Problem {
		return skills.CheckAgent(onlyEntries{FS: fsys, keep: skillEntries(paths, agentDir)}, agentDir)
	}
}

// skillEntries maps each skills directory of the agent at agentDir to the
// entries in it (skills, or groups of skills) that hold one of paths.
func skillEntries(paths []string, agentDir string) map[string][]string {
	out := map[string][]string{}
	for _, tier := range []string{workspace.SkillsDir, workspace.AgentSkillsDir} {
		dir := path.Join(agentDir, tier)
		out[dir] = []string{}
		for _, p := range paths {
			rest, ok := strings.CutPrefix(p, dir+"/")
			if !ok {
				continue
			}
			entry, _, _ := strings.Cut(rest, "/")
			if !slices.Contains(out[dir], entry) {
				out[dir] = append(out[dir], entry)
			}
		}
	}
	return out
}

// onlyEntries is an fs.FS in which listing a directory of keep shows
// only the entries keep names; everything else reads through.
type onlyEntries struct {
	fs.FS
	keep map[string][]string
}

func (o onlyEntries) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(o.FS, name)
	keep, ok := o.keep[name]
	if err != nil || !ok {
		return entries, err
	}
	out := entries[:0:0]
	for _, e := range entries {
		if slices.Contains(keep, e.Name()) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (o onlyEntries) ReadFile(name string) ([]byte, error) { return fs.ReadFile(o.FS, name) }

func (o onlyEntries) Stat(name string) (fs.FileInfo, error) { return fs.Stat(o.FS, name) }
