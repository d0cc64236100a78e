package daemon

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
)

// maxFaultsInStatus is how many faults one status entry lists.
const maxFaultsInStatus = 3

// damageStatus is what /v1/status says of the damage the last check
// found in s's repository (see gitsync.Repository.Verify): notes, by
// agent, for the deployed agents whose files it touches; an entry for
// each agent it hides (its directory cannot be read, so it was not
// deployed: a 404 otherwise unexplained); and what it says of the
// repository's other faults (packs, refs, commits), "" when none.
func damageStatus(s *source, dep *deployment) (notes map[string]string, hidden []api.AgentStatus, repo string) {
	if s.repo == nil {
		return nil, nil, ""
	}
	return damageEntries(s, dep, s.repo.Damage())
}

// damageEntries is damageStatus of the damage d.
func damageEntries(s *source, dep *deployment, d *gitsync.DamageError) (notes map[string]string, hidden []api.AgentStatus, repo string) {
	if d == nil {
		return nil, nil, ""
	}
	hint := "stop quire serve, then run quire doctor --repos " + filepath.Dir(d.Repo) + " for how to repair it"
	if s.kind == kindUpstream {
		hint = "the mirror is fetched again from the upstream"
	}
	var general []gitsync.Fault
	byAgent := map[string][]gitsync.Fault{}
	byDir := map[string][]gitsync.Fault{}
	for _, f := range d.Faults {
		if f.Path == "" || f.Path == "." {
			general = append(general, f)
			continue
		}
		if name := agentOf(dep, f.Path); name != "" {
			byAgent[name] = append(byAgent[name], f)
			continue
		}
		dir := f.Path
		if f.Type != plumbing.TreeObject {
			dir = path.Dir(f.Path)
		}
		byDir[dir] = append(byDir[dir], f)
	}
	notes = map[string]string{}
	for name, fs := range byAgent {
		notes[name] = fmt.Sprintf("repository damaged: %s; %s", faultList(fs), hint)
	}
	for _, dir := range slices.Sorted(maps.Keys(byDir)) {
		hidden = append(hidden, api.AgentStatus{Name: path.Base(dir), Source: s.id(),
			LastError: fmt.Sprintf("not deployed: the repository is damaged: %s; %s", faultList(byDir[dir]), hint)})
	}
	if len(general) > 0 {
		what := "repository damaged"
		if slices.ContainsFunc(general, func(f gitsync.Fault) bool { return !f.Object.IsZero() }) {
			what = "repository damaged, no agent of it can be read"
		}
		repo = fmt.Sprintf("%s: %s; %s", what, faultList(general), hint)
	}
	return notes, hidden, repo
}

// agentOf is the deployed agent of dep whose directory holds p (the
// innermost), or "".
func agentOf(dep *deployment, p string) string {
	if dep == nil {
		return ""
	}
	best, depth := "", -1
	for _, name := range dep.names {
		dir := dep.agents[name].agent.Dir
		n := len(dir)
		if dir == "." {
			n = 0
		} else if p != dir && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		if n > depth {
			best, depth = name, n
		}
	}
	return best
}

func faultList(fs []gitsync.Fault) string {
	var parts []string
	for i, f := range fs {
		if i == maxFaultsInStatus {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-i))
			break
		}
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// joinErrors joins the messages that are not empty with "; ".
func joinErrors(msgs ...string) string {
	return strings.Join(slices.DeleteFunc(msgs, func(m string) bool { return m == "" }), "; ")
}
