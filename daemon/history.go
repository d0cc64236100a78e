package daemon

import (
	"context"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
)

// maxHistoryWalk bounds the commits one history request reads.
const maxHistoryWalk = 5000

// History implements api.Review: the commits on ref's first-parent line
// that change the agent's files (merges of main left out: those are
// people's), newest first, each as a diff of the agent's files.
func (rv *reviewer) History(ctx context.Context, agent string, q api.HistoryQuery) ([]api.HistoryEntry, error) {
	ref, err := rv.sources.agent(agent)
	if err != nil {
		return nil, err
	}
	if ref.src.repo == nil {
		return []api.HistoryEntry{}, nil // a working tree keeps no history
	}
	repo := ref.src.repo
	start, err := rv.historyStart(ref, q)
	if err != nil {
		return nil, err
	}
	dir := ref.ag.agent.Dir
	var out []api.HistoryEntry
	for h, n := start, 0; !h.IsZero() && len(out) < q.Limit && n < maxHistoryWalk && ctx.Err() == nil; n++ {
		info, err := repo.CommitInfo(h)
		if err != nil {
			return nil, err
		}
		parent := plumbing.ZeroHash
		if len(info.Parents) > 0 {
			parent = info.Parents[0]
		}
		h = parent
		if len(info.Parents) > 1 {
			continue
		}
		if e, ok := rv.historyEntry(ctx, repo, dir, info, parent, q); ok {
			out = append(out, e)
		}
	}
	return out, ctx.Err()
}

// historyStart is the commit a history walk starts at: q.Before's first
// parent, else the head of q.Ref.
func (rv *reviewer) historyStart(ref agentRef, q api.HistoryQuery) (plumbing.Hash, error) {
	repo := ref.src.repo
	if q.Before != "" {
		h := plumbing.NewHash(q.Before)
		if h.String() != q.Before || !repo.HasCommit(q.Before) {
			return plumbing.ZeroHash, api.Errorf(api.CodeBadRequest, "before %q: not a commit of this repository", q.Before)
		}
		info, err := repo.CommitInfo(h)
		if err != nil || len(info.Parents) == 0 {
			return plumbing.ZeroHash, err
		}
		return info.Parents[0], nil
	}
	branch := gitsync.LiveRef
	if q.Ref == "main" {
		branch = gitsync.MainRef
	}
	h, err := repo.Resolve(branch.String())
	if err != nil {
		if ref.src.kind != kindRepo {
			h, _, err = ref.src.head()
		}
		if err != nil {
			return plumbing.ZeroHash, api.Errorf(api.CodeNotFound, "no branch %s in %s", branch.Short(), ref.src.id())
		}
	}
	return h, nil
}

// historyEntry is commit info as an entry of the agent in dir, and
// whether it is one that q keeps.
func (rv *reviewer) historyEntry(ctx context.Context, repo *gitsync.Repository, dir string, info gitsync.CommitInfo, parent plumbing.Hash, q api.HistoryQuery) (api.HistoryEntry, bool) {
	user := trailer(info.Message, "Quire-User")
	if q.User != "" && user != q.User {
		return api.HistoryEntry{}, false
	}
	before, err := snapshotOrEmpty(repo, parent)
	if err != nil {
		return api.HistoryEntry{}, false
	}
	after, err := repo.SnapshotOf(info.Hash)
	if err != nil {
		return api.HistoryEntry{}, false
	}
	var a fs.FS = emptyFS{}
	if before != nil {
		a = before
	}
	mine := dirChanges(a, after, dir)
	var files []string
	for _, c := range mine {
		rel, _ := underDir(dir, c.Path)
		files = append(files, rel)
	}
	if len(mine) == 0 || (q.File != "" && !containsPath(files, q.File)) {
		return api.HistoryEntry{}, false
	}
	return api.HistoryEntry{Commit: info.Hash.String(), Time: info.Author.When, Agent: info.Author.Name, User: user,
		Message: strings.TrimSpace(info.Message), Files: files, Diff: diffTrees(a, after, mine)}, true
}

func containsPath(files []string, p string) bool {
	for _, f := range files {
		if f == p || strings.HasPrefix(f, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// hasher is a tree whose entries' object hashes can be read without
// their content (gitsync.Snapshot).
type hasher interface {
	Hash(name string) (plumbing.Hash, error)
}

// dirChanges lists the files under dir that differ between trees a and
// b, sorted by path: only dir is read (its hash first: an agent's
// directory that did not change costs two lookups), not the whole tree
// of a repository of many agents.
func dirChanges(a, b fs.FS, dir string) []gitsync.Change {
	if dir == "" {
		dir = "."
	}
	ha, aok := a.(hasher)
	hb, bok := b.(hasher)
	if aok && bok {
		x, errA := ha.Hash(dir)
		y, errB := hb.Hash(dir)
		if errA == nil && errB == nil && x == y {
			return nil
		}
	}
	left, right := fileHashes(a, dir), fileHashes(b, dir)
	var out []gitsync.Change
	for p, h := range right {
		switch old, ok := left[p]; {
		case !ok:
			out = append(out, gitsync.Change{Path: p, Kind: gitsync.Added, Hash: h})
		case old != h:
			out = append(out, gitsync.Change{Path: p, Kind: gitsync.Modified, Hash: h})
		}
	}
	for p := range left {
		if _, ok := right[p]; !ok {
			out = append(out, gitsync.Change{Path: p, Kind: gitsync.Deleted})
		}
	}
	slices.SortFunc(out, func(x, y gitsync.Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// fileHashes maps every file under dir in fsys to its blob hash (its
// content's when fsys cannot say).
func fileHashes(fsys fs.FS, dir string) map[string]plumbing.Hash {
	out := map[string]plumbing.Hash{}
	h, _ := fsys.(hasher)
	_ = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if h != nil {
			if x, err := h.Hash(p); err == nil {
				out[p] = x
				return nil
			}
		}
		if b, err := fs.ReadFile(fsys, p); err == nil {
			out[p] = gitsync.BlobHash(b)
		}
		return nil
	})
	return out
}

// emptyFS is the tree before the first commit.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Deploys implements api.Review: the commits of main (people's pushes
// and approvals) that changed the agent, newest first (at most 100).
func (rv *reviewer) Deploys(ctx context.Context, agent string) ([]api.Deploy, error) {
	es, err := rv.History(ctx, agent, api.HistoryQuery{Ref: "main", Limit: 100})
	if err != nil {
		return nil, err
	}
	out := make([]api.Deploy, 0, len(es))
	for _, e := range es {
		subject, _, _ := strings.Cut(e.Message, "\n")
		out = append(out, api.Deploy{Commit: e.Commit, Time: e.Time, Subject: subject})
	}
	return out, nil
}

// sessionKinds are the session kinds a prompt diff compares.
var sessionKinds = []prompt.Session{prompt.SessionMain, prompt.SessionSubagent, prompt.SessionCron}

// PromptDiff implements api.Review: the agent's prompt of each session
// kind as commits from and to deploy it, and their diff.
func (rv *reviewer) PromptDiff(ctx context.Context, agent string, req api.PromptDiffRequest) (api.PromptDiff, error) {
	ref, err := rv.sources.agent(agent)
	if err != nil {
		return api.PromptDiff{}, err
	}
	if ref.src.repo == nil {
		return api.PromptDiff{}, api.Errorf(api.CodeNotFound, "agent %q is served from a working tree: it has no deployed commits", agent)
	}
	var deps [2]*deployment
	for i, c := range []string{req.From, req.To} {
		h := plumbing.NewHash(c)
		if h.String() != c || !ref.src.repo.HasCommit(c) {
			return api.PromptDiff{}, api.Errorf(api.CodeBadRequest, "%q is not a full commit id of this repository (see GET /v1/agents/%s/deploys)", c, agent)
		}
		snap, err := ref.src.repo.SnapshotOf(h)
		if err != nil {
			return api.PromptDiff{}, err
		}
		if deps[i], err = rv.deployer.build(ctx, ref.src, snap, c); err != nil {
			return api.PromptDiff{}, err
		}
	}
	out := api.PromptDiff{Kinds: []api.KindDiff{}}
	for _, kind := range sessionKinds {
		before := assembleAt(deps[0], agent, kind, req)
		after := assembleAt(deps[1], agent, kind, req)
		kd := api.KindDiff{Kind: string(kind), Before: before, After: after}
		if before != after {
			kd.Diff = unifiedDiff([]fileDiff{{path: "prompt-" + string(kind) + ".txt", before: []byte(before), after: []byte(after)}})
		}
		out.Kinds = append(out.Kinds, kd)
	}
	return out, nil
}

// assembleAt is the prompt dep serves agent for a session of kind ("" when
// the agent is not deployed there).
func assembleAt(dep *deployment, agent string, kind prompt.Session, req api.PromptDiffRequest) string {
	a, ok := dep.agents[agent]
	if !ok {
		return ""
	}
	res, err := dep.ws.Assemble(prompt.Request{Agent: agent, User: req.User, Session: kind, Channel: prompt.Channel(req.Channel),
		Skills: a.skills.PromptSkills(a.request())})
	if err != nil {
		return ""
	}
	return res.Prompt
}

// Template implements api.Review: the embedded template of the file's
// name ("reset to default"; a user's USER.md has USER.md's).
func (rv *reviewer) Template(ctx context.Context, agent, p string) ([]byte, error) {
	if _, err := rv.sources.agent(agent); err != nil {
		return nil, err
	}
	b, err := templates.Template(path.Base(p))
	if err != nil {
		return nil, api.Errorf(api.CodeNotFound, "no template for %s", p)
	}
	return b, nil
}

// AllSkills implements api.Review: every skill in effect but those the
// shared skills repository's grants hide, with whether the request may
// use it (its allow list), then every shadowed SKILL.md with the one
// that hides it.
func (rv *reviewer) AllSkills(ctx context.Context, agent, user string) (api.SkillsResponse, error) {
	ref, err := rv.sources.agent(agent)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	sreq, err := (&reader{}).skillsRequest(ref, user)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	out := api.SkillsResponse{Skills: []api.SkillEntry{}}
	set := ref.ag.skills
	for _, s := range set.Skills() {
		if !s.Access.Allows(&sreq) {
			continue // a shared skill its grants hide: not even its name
		}
		e := skillEntry(s, 0)
		allowed := sreq.Permits(s)
		e.Allowed = &allowed
		out.Skills = append(out.Skills, e)
	}
	for _, sh := range set.Shadows() {
		no := false
		e := api.SkillEntry{Name: sh.Slug, Tier: sh.ShadowedTier.String(), Source: sh.Shadowed, ShadowedBy: sh.Winner, Allowed: &no}
		if w, ok := set.Skill(sh.Slug); ok {
			e.Description = w.Description
		}
		out.Skills = append(out.Skills, e)
	}
	return out, nil
}
