package daemon

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// The shared skills repository is the hosted repository named
// workspace.SharedSkillsRepo: its <slug>/SKILL.md skills are a managed
// tier of every agent the daemon serves, each SKILL.md's visibility and
// its grants file (workspace.GrantsFile) saying which agents may use it
// (skills.Access). A push to it is validated by skills.CheckShared, and
// its deployment rebuilds every other source's skills.

// isSharedSkills reports whether s is the shared skills repository.
func isSharedSkills(s *source) bool {
	return s.kind == kindRepo && s.name == workspace.SharedSkillsRepo
}

// buildSharedSkills is the deployment of the shared skills repository at
// commit: no agents, its skills as a source for the others'.
func (dp *deployer) buildSharedSkills(s *source, base fs.FS, commit string) *deployment {
	src, _, probs := skills.SharedSource(base, "repo:"+s.name)
	for _, p := range probs {
		// A push is refused with these; a repository changed behind the
		// daemon's back still deploys what it can read.
		dp.log.Warn("shared skills", "problem", p.String())
	}
	return &deployment{commit: commit, fsys: base, base: base, agents: map[string]*deployedAgent{}, at: dp.now(), sharedSkills: &src}
}

// sharedSources are the skill tiers every agent shares besides its own and
// the built-ins: the shared skills repository as deployed (it wins over
// the managed directory), ~/.agents/skills and the managed directory.
func (dp *deployer) sharedSources() []skills.Source {
	out := dp.shared.Sources()
	for _, s := range dp.sources.all() {
		if !isSharedSkills(s) {
			continue
		}
		if dep := s.deploys.current(); dep != nil && dep.sharedSkills != nil {
			out = append([]skills.Source{*dep.sharedSkills}, out...)
		}
	}
	return out
}

// rebuildOthers rebuilds every source but the shared skills repository
// s, after it deployed, so their agents see its skills.
func (dp *deployer) rebuildOthers(ctx context.Context, s *source) {
	for _, o := range dp.sources.all() {
		if o == s {
			continue
		}
		if err := dp.rebuild(ctx, o); err != nil {
			dp.log.Warn("reload shared skills failed", "source", o.id(), "err", err)
		}
	}
}

// writeSharedSkillsReport tells the pusher of the shared skills
// repository what every agent now has.
func writeSharedSkillsReport(w io.Writer, dep *deployment) {
	set := skills.Load(0, []skills.Source{*dep.sharedSkills})
	count := map[skills.Visibility]int{}
	for _, sk := range set.Skills() {
		v := sk.Access.Visibility
		if v == "" {
			v = skills.Public
		}
		count[v]++
	}
	fmt.Fprintf(w, "quire: shared skills deployed %s: %d skills (%d public, %d internal, %d private) for the agents of this daemon\n",
		short(dep.commit), len(set.Skills()), count[skills.Public], count[skills.Internal], count[skills.Private])
}

// pushChecks is the validation of a push to a hosted repository: the
// shared skills repository's own (skills.CheckShared with the file rules),
// the workspace checks and agent claims for every other repository.
func pushChecks(workspaces, shared gitsync.Validator) gitsync.Validator {
	return gitsync.ValidatorFunc(func(ctx context.Context, ref gitsync.RefUpdate, tree *gitsync.Snapshot, changed []gitsync.Change) []workspace.Problem {
		if ref.Repo == workspace.SharedSkillsRepo {
			return shared.Validate(ctx, ref, tree, changed)
		}
		return workspaces.Validate(ctx, ref, tree, changed)
	})
}

// skillSearch is the daemon's skill search: hybrid (skills.HybridSearch,
// BM25 and vectors fused 0.3/0.7) when the memory embedder makes vectors,
// BM25 alone when it is none. The skills' vectors are cached by skill
// version for every agent and deployment.
type skillSearch struct {
	emb     memory.Embedder // nil or Dimensions() == 0: BM25 only
	vectors skills.Vectors
}

func newSkillSearch(emb memory.Embedder) *skillSearch {
	if emb != nil && emb.Dimensions() == 0 {
		emb = nil
	}
	return &skillSearch{emb: emb}
}

// search returns the best skills of set for query that req may see.
func (ss *skillSearch) search(ctx context.Context, set *skills.Set, query string, req skills.Request, limit int) ([]skills.Hit, error) {
	if ss == nil || ss.emb == nil {
		return set.Search(query, req, limit, nil), nil
	}
	hits, err := set.HybridSearch(ctx, ss.emb, &ss.vectors, query, req, limit)
	if err != nil {
		return nil, fmt.Errorf("skill search: %w", err)
	}
	return hits, nil
}
