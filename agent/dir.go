package agent

import (
	"io/fs"
	"path"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// DirOf returns the directory of the agent that the file at slash path p
// of the tree fsys belongs to: the nearest directory above it holding
// agent.yaml, by the rule prompt.Open discovers agents with (never below a
// hidden directory or node_modules, nor inside the users/, memory/,
// rooms/ or skills/ directory of an agent or of the root), or "." (the
// root agent) when there is none.
func DirOf(fsys fs.FS, p string) string {
	return dirOf(p, func(dir string) bool { return hasConfig(fsys, dir) })
}

// dirOf is DirOf with isAgent saying which directories hold agent.yaml.
func dirOf(p string, isAgent func(dir string) bool) string {
	best, dir := ".", "."
	agentHere := false // the root counts as an agent's directory below (dir == ".")
	var elems []string
	if d := path.Dir(p); d != "." {
		elems = strings.Split(d, "/")
	}
	for _, e := range elems {
		if workspace.SkipsAgentSearch(e, agentHere || dir == ".") {
			break
		}
		dir = path.Join(dir, e)
		if agentHere = isAgent(dir); agentHere {
			best = dir
		}
	}
	return best
}

// hasConfig reports whether dir of fsys holds agent.yaml.
func hasConfig(fsys fs.FS, dir string) bool {
	info, err := fs.Stat(fsys, path.Join(dir, workspace.ConfigFile))
	return err == nil && !info.IsDir()
}

// rel is p relative to the agent directory dir.
func rel(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}
