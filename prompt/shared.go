package prompt

import (
	"strings"

	"github.com/quirehq/quire/workspace"
)

// sharedCandidates are the repository-level context files a main
// session of key sees after the agent's own: its team's SOUL.md and (in
// a private channel, like MEMORY.md) MEMORY.md from _shared/teams/<team>/,
// then every Markdown file directly in _shared/ (CULTURE.md …) by name.
// They are charged to the agent's budget and reported like its own files.
func (w *Workspace) sharedCandidates(key planKey) []candidate {
	if key.mode != ModeFull {
		return nil
	}
	var out []candidate
	if team := key.agent.Config.Team; team != "" {
		for _, f := range workspace.TeamFiles {
			if f == workspace.MemoryFile && key.channel != ChannelDM {
				continue
			}
			p := workspace.TeamDir(team) + "/" + f
			out = append(out, candidate{name: p, rel: p, root: true})
		}
	}
	d := w.dir(workspace.SharedDir)
	if d.absent || d.unknown {
		return out
	}
	for _, e := range d.entries { // sorted by name
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		p := workspace.SharedDir + "/" + e.Name()
		out = append(out, candidate{name: p, rel: p, root: true})
	}
	return out
}
