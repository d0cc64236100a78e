package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// sourceSet is the set of sources the daemon serves, and the git host
// that holds the hosted ones: it adds a source once (a push to a new
// name adds one while the daemon runs) and finds an agent in the current
// deployments. Every other part reaches the sources through it.
type sourceSet struct {
	log *slog.Logger
	// host holds the hosted repositories (nil without --repos); set
	// while the daemon is built, before it serves.
	host *gitsync.Host

	mu   sync.RWMutex
	list []*source
}

// add adds s unless a source of its kind and name is there already,
// returning the one in the set.
func (ss *sourceSet) add(s *source) *source {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, o := range ss.list {
		if o.kind == s.kind && o.name == s.name {
			return o
		}
	}
	ss.list = append(ss.list, s)
	return s
}

// all returns the sources, in the order they were added.
func (ss *sourceSet) all() []*source {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	return append([]*source(nil), ss.list...)
}

// hosted returns the source of the hosted repository name, adding it
// when it is new.
func (ss *sourceSet) hosted(name string) (*source, error) {
	ss.mu.RLock()
	for _, s := range ss.list {
		if s.kind == kindRepo && s.name == name {
			ss.mu.RUnlock()
			return s, nil
		}
	}
	ss.mu.RUnlock()
	repo, err := ss.host.Repository(name)
	if err != nil {
		return nil, err
	}
	// Damage (a broken ref, a pack with bytes changed on disk, an
	// object an agent's directory needs) is named now, in the log and
	// in /v1/status (see damageStatus); a push can replace a broken ref.
	_ = ss.host.Verify(context.Background(), name)
	repo.RemoveTemporaries() // what a killed daemon left
	// The upgrade of a repository from before live: live starts at
	// main, nothing is rewritten.
	if created, err := repo.EnsureBranch(gitsync.LiveRef, gitsync.MainRef); err != nil {
		ss.log.Error("cannot create live", "repo", name, "err", err)
	} else if created {
		ss.log.Info("created live at main: agents' writes go to live from now on", "repo", name)
	}
	// main may have moved while the daemon was down (a push by file
	// path): live catches up.
	if m, err := repo.MergeMain(context.Background()); err != nil {
		ss.log.Error("cannot merge main into live", "repo", name, "err", err)
	} else if !m.IsZero() {
		ss.log.Info("merged main into live", "repo", name, "live", m.String()[:12])
	}
	return ss.add(&source{kind: kindRepo, name: name, rootName: name, repo: repo, refs: []string{gitsync.LiveRef.String()}}), nil
}

// agentRef is an agent of a deployment.
type agentRef struct {
	src *source
	dep *deployment
	ag  *deployedAgent
}

// agent finds agent name in the current deployments.
func (ss *sourceSet) agent(name string) (agentRef, error) {
	for _, s := range ss.all() {
		dep := s.deploys.current()
		if dep == nil {
			continue
		}
		if a, ok := dep.agents[name]; ok {
			return agentRef{src: s, dep: dep, ag: a}, nil
		}
	}
	return agentRef{}, api.Errorf(api.CodeUnknownAgent, "no deployed agent %q; GET /v1/agents lists them", name)
}

// agentRefs lists the deployed agents sorted by name; an agent that two
// sources define is the first source's.
func (ss *sourceSet) agentRefs() []agentRef {
	var out []agentRef
	seen := map[string]bool{}
	for _, s := range ss.all() {
		dep := s.deploys.current()
		if dep == nil {
			continue
		}
		for _, name := range dep.names {
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, agentRef{src: s, dep: dep, ag: dep.agents[name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ag.agent.Name < out[j].ag.agent.Name })
	return out
}

// olderCommit tells the PostgreSQL store whether commit is older than
// the indexed one for agent (pgstore.Options.Older): an ancestor of it.
// A stored commit this daemon has not fetched yet came from another
// daemon that is ahead: a follower fetches and counts it as newer.
func (ss *sourceSet) olderCommit(agent, commit, indexed string) bool {
	ref, err := ss.agent(agent)
	if err != nil || ref.src.repo == nil {
		return false
	}
	older, err := ref.src.repo.IsAncestor(commit, indexed)
	if errors.Is(err, plumbing.ErrObjectNotFound) && ref.src.up != nil {
		ref.src.up.trigger()
		return true
	}
	return err == nil && older
}

// claims is a push validator: a push that would deploy (main or live of
// a hosted repository) may not define an agent another source serves
// already — it would take over that agent's prompt and memory index.
// The refusal names both places (behavior: one agent, one source).
func (ss *sourceSet) claims(ctx context.Context, ref gitsync.RefUpdate, tree *gitsync.Snapshot, changed []gitsync.Change) []workspace.Problem {
	if ref.Repo == "" || (ref.Name != gitsync.MainRef && ref.Name != gitsync.LiveRef) {
		return nil
	}
	// An agent's name comes from its agent.yaml (or, for the root, the
	// repository's name): a push that creates the ref or changes an
	// agent.yaml is the only one that can name a new agent. Agents'
	// writes, pushed by other daemons, skip the workspace's discovery.
	if !ref.Old.IsZero() && !slices.ContainsFunc(changed, func(c gitsync.Change) bool {
		return path.Base(c.Path) == workspace.ConfigFile
	}) {
		return nil
	}
	ws, err := prompt.Open(tree, prompt.Options{RootName: ref.Repo})
	if err != nil {
		return nil // the workspace checks report what cannot be read
	}
	self := string(kindRepo) + ":" + ref.Repo
	var out []workspace.Problem
	for _, o := range ss.all() {
		if o.id() == self {
			continue
		}
		dep := o.deploys.current()
		if dep == nil {
			continue
		}
		for _, a := range ws.Agents() {
			if _, ok := dep.agents[a.Name]; !ok {
				continue
			}
			out = append(out, workspace.Problem{Path: path.Join(a.Dir, workspace.ConfigFile), Severity: workspace.SeverityError, Code: "agent-defined-elsewhere",
				Message: fmt.Sprintf("agent %q is already defined by %s; rename it here (agent.yaml name:) or remove it there", a.Name, o.id())})
		}
	}
	return out
}
