package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/workspace"
)

// reviewer answers the console's review routes (api.Review): persona
// proposals (list, approve into main as the person, reject with a tag
// that records it), the agents' history on live, deploys and what they
// changed in the prompt, and the embedded templates.
type reviewer struct {
	sources  *sourceSet
	deployer *deployer
	events   *broker
	log      *slog.Logger
	now      func() time.Time
	// validate is the validation of a push (Daemon.pushValidator).
	validate gitsync.Validator
}

const proposalsPrefix = "refs/heads/proposals/"

// proposalBranch is the ref of proposal id of agent.
func proposalBranch(agent, id string) plumbing.ReferenceName {
	return plumbing.ReferenceName(proposalsPrefix + agent + "/" + id)
}

// hostedAgent finds agent in a hosted repository: proposals live there.
func (rv *reviewer) hostedAgent(agent string) (agentRef, error) {
	ref, err := rv.sources.agent(agent)
	if err != nil {
		return agentRef{}, err
	}
	if ref.src.kind != kindRepo {
		return agentRef{}, api.Errorf(api.CodeNotFound, "agent %q is not served from a hosted repository (--repos): it has no proposals", agent)
	}
	return ref, nil
}

// personSignature is the person of ctx as a commit's author: their
// name and email from the token file, else the token's id (with a
// warning in the log).
func personSignature(ctx context.Context, now time.Time, log *slog.Logger) object.Signature {
	p, ok := api.PersonOf(ctx)
	if !ok {
		p = api.Person{ID: "local"}
	}
	sig := object.Signature{Name: p.Name, Email: p.Email, When: now}
	if sig.Name == "" {
		log.Warn("a person's commit is authored by a token id: give the token name= and email= in the token file", "token", p.ID)
		sig.Name = p.ID
	}
	if sig.Email == "" {
		sig.Email = p.ID + "@quire.console"
	}
	return sig
}

// proposal is one open proposal as read from its branch.
type proposal struct {
	id         string
	tip, base  plumbing.Hash
	info       gitsync.CommitInfo
	changes    []gitsync.Change
	agentFiles []string
}

// openProposals reads the open proposals of ref's agent, by number.
func (rv *reviewer) openProposals(ctx context.Context, ref agentRef) ([]proposal, error) {
	repo := ref.src.repo
	agent := ref.ag.agent.Name
	names, err := repo.RefNames(proposalsPrefix + agent + "/")
	if err != nil {
		return nil, err
	}
	var out []proposal
	for _, name := range names {
		id := strings.TrimPrefix(name, proposalsPrefix+agent+"/")
		p, err := rv.readProposal(ctx, ref, id)
		if err != nil {
			rv.log.Warn("cannot read a proposal", "branch", name, "err", err)
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b proposal) int {
		x, _ := strconv.Atoi(a.id)
		y, _ := strconv.Atoi(b.id)
		return x - y
	})
	return out, nil
}

// readProposal reads proposal id: its tip, the commit of main it
// started from (the first commit on its first-parent line that main
// holds) and what it changes.
func (rv *reviewer) readProposal(ctx context.Context, ref agentRef, id string) (proposal, error) {
	repo := ref.src.repo
	tip, err := repo.Resolve(proposalBranch(ref.ag.agent.Name, id).String())
	if err != nil {
		return proposal{}, api.Errorf(api.CodeNotFound, "agent %q has no open proposal %q", ref.ag.agent.Name, id)
	}
	info, err := repo.CommitInfo(tip)
	if err != nil {
		return proposal{}, err
	}
	main, err := repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return proposal{}, fmt.Errorf("resolve main: %w", err)
	}
	base := plumbing.ZeroHash
	for c, n := info, 0; len(c.Parents) > 0 && n < 100; n++ {
		p := c.Parents[0]
		if in, err := repo.IsAncestor(p.String(), main.String()); err == nil && in {
			base = p
			break
		}
		if c, err = repo.CommitInfo(p); err != nil {
			return proposal{}, err
		}
	}
	changes, err := repo.Changes(ctx, base, tip)
	if err != nil {
		return proposal{}, err
	}
	p := proposal{id: id, tip: tip, base: base, info: info}
	dir := ref.ag.agent.Dir
	for _, c := range changes {
		if rel, ok := underDir(dir, c.Path); ok {
			p.changes = append(p.changes, c)
			p.agentFiles = append(p.agentFiles, rel)
		}
	}
	return p, nil
}

// underDir returns p relative to dir, and whether it is inside it.
func underDir(dir, p string) (string, bool) {
	if dir == "" || dir == "." {
		return p, true
	}
	rel, ok := strings.CutPrefix(p, dir+"/")
	return rel, ok
}

// Proposals implements api.Review.
func (rv *reviewer) Proposals(ctx context.Context, agent string) ([]api.Proposal, error) {
	ref, err := rv.sources.agent(agent)
	if err != nil {
		return nil, err
	}
	if ref.src.kind != kindRepo {
		return []api.Proposal{}, nil
	}
	ps, err := rv.openProposals(ctx, ref)
	if err != nil {
		return nil, err
	}
	main, err := ref.src.repo.Snapshot(gitsync.MainRef.String())
	if err != nil {
		return nil, err
	}
	out := make([]api.Proposal, 0, len(ps))
	for _, p := range ps {
		tip, err := ref.src.repo.SnapshotOf(p.tip)
		if err != nil {
			return nil, err
		}
		out = append(out, api.Proposal{ID: p.id, Branch: strings.TrimPrefix(proposalBranch(agent, p.id).String(), "refs/heads/"),
			Message: strings.TrimSpace(p.info.Message), Author: p.info.Author.Name, User: trailer(p.info.Message, "Quire-User"),
			Created: p.info.Author.When, Files: p.agentFiles, Diff: diffTrees(main, tip, p.changes)})
	}
	return out, nil
}

// diffTrees is the unified diff of the files changes name, from a to b.
func diffTrees(a, b fs.FS, changes []gitsync.Change) string {
	files := make([]fileDiff, 0, len(changes))
	for _, c := range changes {
		before, _ := fs.ReadFile(a, c.Path)
		after, _ := fs.ReadFile(b, c.Path)
		files = append(files, fileDiff{path: c.Path, before: before, after: after})
	}
	return unifiedDiff(files)
}

// trailer returns the value of the last trailer key of message.
func trailer(message, key string) string {
	v := ""
	for _, line := range strings.Split(message, "\n") {
		if val, ok := strings.CutPrefix(line, key+": "); ok {
			v = strings.TrimSpace(val)
		}
	}
	return v
}

// Approve implements api.Review: the proposal's changes become one
// commit on main authored by the person, validated on its merge with
// live as a push to main is; main and live move, the branch goes.
func (rv *reviewer) Approve(ctx context.Context, agent, id string) (api.Approved, error) {
	ref, err := rv.hostedAgent(agent)
	if err != nil {
		return api.Approved{}, err
	}
	s := ref.src
	if err := s.writes.lock.LockContext(ctx); err != nil {
		return api.Approved{}, api.Errorf(api.CodeWriteTimeout, "the repository is busy; approve again")
	}
	defer s.writes.lock.Unlock()
	p, err := rv.readProposal(ctx, ref, id)
	if err != nil {
		return api.Approved{}, err
	}
	if len(p.changes) == 0 {
		return api.Approved{}, api.Errorf(api.CodeNoChange, "proposal %s changes nothing of agent %q; reject it instead", id, agent)
	}
	sig := personSignature(ctx, rv.now(), rv.log)
	commit, err := rv.mergeProposal(ctx, s, p, sig, agent)
	if err != nil {
		return api.Approved{}, err
	}
	if err := s.repo.UpdateRef(proposalBranch(agent, id), p.tip, plumbing.ZeroHash); err != nil {
		rv.log.Warn("an approved proposal's branch stays", "branch", proposalBranch(agent, id).Short(), "err", err)
	}
	if _, err := rv.deployer.deployLogged(context.WithoutCancel(ctx), s, slog.LevelInfo); err != nil {
		rv.log.Warn("deploy after an approval failed", "source", s.id(), "err", err)
	}
	rv.log.Info("proposal approved", "agent", agent, "proposal", id, "by", sig.Name, "commit", commit.String())
	rv.events.publish(api.Event{Type: "proposal", Agent: agent, Source: s.id(), Commit: commit.String(),
		Message: fmt.Sprintf("%s approved proposal %s", sig.Name, id)})
	return api.Approved{Commit: commit.String()}, nil
}

// mergeProposal commits p's changes on main as sig, after the checks a
// push to main gets, and merges the new main into live.
func (rv *reviewer) mergeProposal(ctx context.Context, s *source, p proposal, sig object.Signature, agent string) (plumbing.Hash, error) {
	repo := s.repo
	main, err := repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	baseSnap, err := snapshotOrEmpty(repo, p.base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tipSnap, err := repo.SnapshotOf(p.tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	writes, err := proposalWrites(baseSnap, tipSnap, p.changes)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	subject := strings.SplitN(strings.TrimSpace(p.info.Message), "\n", 2)[0]
	msg := fmt.Sprintf("%s\n\nApproved proposal %s of %s (%s) by %s.\n", strings.TrimSuffix(subject, " (proposal)"),
		p.id, agent, p.tip.String()[:12], sig.Name)
	commit, err := repo.CommitOn(ctx, main, gitsync.CommitRequest{Writes: writes, Author: sig, Message: msg})
	var conflict *gitsync.ConflictError
	if errors.As(err, &conflict) {
		return plumbing.ZeroHash, api.Errorf(api.CodeMergeConflict, "main changed %s since proposal %s was made; merge it by git or reject it", conflict.Path, p.id)
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := rv.moveMain(ctx, s, main, commit); err != nil {
		return plumbing.ZeroHash, err
	}
	return commit, nil
}

// moveMain moves main from old to commit, a child of old, once the
// checks of a push to main pass on its merge with live (refused with the
// push's messages), and merges it into live.
func (rv *reviewer) moveMain(ctx context.Context, s *source, main, commit plumbing.Hash) error {
	repo := s.repo
	live, err := repo.Resolve(gitsync.LiveRef.String())
	if err != nil {
		return err
	}
	merged, err := repo.MergeOn(ctx, commit, live)
	var mc *gitsync.MergeConflictError
	if errors.As(err, &mc) {
		return api.Errorf(api.CodeMergeConflict, "the change cannot be merged into live (what is deployed): %v", mc)
	}
	if err != nil {
		return err
	}
	if err := rv.check(ctx, s, main, commit, merged); err != nil {
		return err
	}
	if err := repo.UpdateRef(gitsync.MainRef, main, commit); err != nil {
		return api.Errorf(api.CodeStale, "main moved meanwhile; try again")
	}
	if !merged.IsZero() {
		if err := repo.UpdateRef(gitsync.LiveRef, live, merged); err != nil {
			if _, err := repo.MergeMain(ctx); err != nil {
				rv.log.Warn("main cannot be merged into live", "source", s.id(), "err", err)
			}
		}
	}
	return nil
}

// check validates commit (on main, old main) as a push to main is: on
// the tree it would deploy (merged into live, when that merge is a new
// commit). Errors refuse it with the push's messages.
func (rv *reviewer) check(ctx context.Context, s *source, old, commit, merged plumbing.Hash) error {
	deployed := commit
	if !merged.IsZero() {
		deployed = merged
	}
	tree, err := s.repo.SnapshotOf(deployed)
	if err != nil {
		return err
	}
	changed, err := s.repo.Changes(ctx, old, commit)
	if err != nil {
		return err
	}
	probs := workspace.Errors(rv.validate.Validate(ctx, gitsync.RefUpdate{Repo: s.name, Name: gitsync.MainRef, Old: old, New: commit}, tree, changed))
	if len(probs) == 0 {
		return nil
	}
	msgs := make([]string, len(probs))
	for i, p := range probs {
		msgs[i] = p.String()
	}
	return api.Errorf(api.CodeInvalid, "main would not accept this proposal: %s; nothing was merged", strings.Join(msgs, "; "))
}

// proposalWrites are the writes that apply changes (base → tip) to
// main, each on the condition that main still has the base's version.
func proposalWrites(base, tip *gitsync.Snapshot, changes []gitsync.Change) ([]gitsync.FileWrite, error) {
	var out []gitsync.FileWrite
	for _, c := range changes {
		w := gitsync.FileWrite{Path: c.Path, Match: new(plumbing.Hash)}
		if base != nil {
			if h, err := base.Hash(c.Path); err == nil {
				*w.Match = h
			}
		}
		if c.Kind == gitsync.Deleted {
			w.Delete = true
		} else {
			b, err := tip.ReadFile(c.Path)
			if err != nil {
				return nil, err
			}
			w.Content = b
		}
		out = append(out, w)
	}
	return out, nil
}

func snapshotOrEmpty(repo *gitsync.Repository, h plumbing.Hash) (*gitsync.Snapshot, error) {
	if h.IsZero() {
		return nil, nil
	}
	return repo.SnapshotOf(h)
}

// Reject implements api.Review: the branch goes and an annotated tag
// proposals/<agent>/<id>-rejected on its tip records who and when.
func (rv *reviewer) Reject(ctx context.Context, agent, id string) error {
	ref, err := rv.hostedAgent(agent)
	if err != nil {
		return err
	}
	s := ref.src
	if err := s.writes.lock.LockContext(ctx); err != nil {
		return api.Errorf(api.CodeWriteTimeout, "the repository is busy; reject again")
	}
	defer s.writes.lock.Unlock()
	branch := proposalBranch(agent, id)
	tip, err := s.repo.Resolve(branch.String())
	if err != nil {
		return api.Errorf(api.CodeNotFound, "agent %q has no open proposal %q", agent, id)
	}
	sig := personSignature(ctx, rv.now(), rv.log)
	msg := fmt.Sprintf("Proposal %s of %s rejected by %s <%s> on %s.\n", id, agent, sig.Name, sig.Email, sig.When.UTC().Format(time.RFC3339))
	tag := rejectedTag(agent, id, 0)
	for n := 1; ; n++ {
		_, err = s.repo.Tag(tag, tip, sig, msg)
		if !errors.Is(err, gitsync.ErrStale) || n > 100 {
			break
		}
		tag = rejectedTag(agent, id, n) // a number used again after an earlier rejection
	}
	if err != nil {
		return err
	}
	if err := s.repo.UpdateRef(branch, tip, plumbing.ZeroHash); err != nil {
		return err
	}
	rv.log.Info("proposal rejected", "agent", agent, "proposal", id, "by", sig.Name, "tag", tag.Short())
	rv.events.publish(api.Event{Type: "proposal", Agent: agent, Source: s.id(), Commit: tip.String(),
		Message: fmt.Sprintf("%s rejected proposal %s", sig.Name, id)})
	return nil
}

func rejectedTag(agent, id string, n int) plumbing.ReferenceName {
	name := "refs/tags/proposals/" + agent + "/" + id + "-rejected"
	if n > 0 {
		name += "-" + strconv.Itoa(n+1)
	}
	return plumbing.ReferenceName(name)
}

// pruneMerged removes the proposal branches of s that main holds: a
// person merged them by git and pushed main.
func pruneMerged(s *source, log *slog.Logger) {
	if s.kind != kindRepo {
		return
	}
	main, err := s.repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return
	}
	names, err := s.repo.RefNames(proposalsPrefix)
	if err != nil {
		return
	}
	for _, name := range names {
		tip, err := s.repo.Resolve(name)
		if err != nil {
			continue
		}
		if in, err := s.repo.IsAncestor(tip.String(), main.String()); err != nil || !in {
			continue
		}
		if err := s.repo.UpdateRef(plumbing.ReferenceName(name), tip, plumbing.ZeroHash); err != nil {
			log.Warn("a merged proposal's branch stays", "branch", name, "err", err)
			continue
		}
		log.Info("merged proposal branch removed", "source", s.id(), "branch", strings.TrimPrefix(name, "refs/heads/"))
	}
}

// proposalCounts is how many proposals each agent of s has open (one
// listing of the refs for all of them).
func proposalCounts(s *source) map[string]int {
	if s.kind != kindRepo {
		return nil
	}
	names, err := s.repo.RefNames(proposalsPrefix)
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, name := range names {
		rest := strings.TrimPrefix(name, proposalsPrefix)
		if i := strings.LastIndexByte(rest, '/'); i > 0 {
			out[rest[:i]]++
		}
	}
	return out
}

// sameProposal finds an open proposal of agent that changes full from
// the content ifMatch names: a second write on the same (stale) ETag is
// answered with it instead of opening another.
func sameProposal(s *source, agent, full, ifMatch string) (committed, bool) {
	if ifMatch == "" || ifMatch == "*" {
		return committed{}, false
	}
	names, err := s.repo.RefNames(proposalsPrefix + agent + "/")
	if err != nil {
		return committed{}, false
	}
	for _, name := range names {
		tip, err := s.repo.Resolve(name)
		if err != nil {
			continue
		}
		info, err := s.repo.CommitInfo(tip)
		if err != nil || len(info.Parents) == 0 {
			continue
		}
		base, err := s.repo.SnapshotOf(info.Parents[0])
		if err != nil {
			continue
		}
		before, err := base.ReadFile(full)
		if err != nil || ETag(before) != ifMatch {
			continue
		}
		head, err := s.repo.SnapshotOf(tip)
		if err != nil {
			continue
		}
		if after, err := head.ReadFile(full); err != nil || string(after) == string(before) {
			continue
		}
		return committed{commit: tip.String(), branch: strings.TrimPrefix(name, "refs/heads/")}, true
	}
	return committed{}, false
}

// pushValidator is the one validation of a push to a hosted repository
// (agent.Check, and no agent another source serves already), which an
// approval goes through too.
func (d *Daemon) pushValidator() gitsync.Validator {
	if d.reviewer.validate == nil {
		d.reviewer.validate = gitsync.Validators{
			gitsync.TreeValidator(agent.WorkspaceChecks(agent.CheckOptions{Cache: d.tokens, SharedSkills: d.deployer.shared.Sources()})),
			gitsync.ValidatorFunc(d.sources.claims)}
	}
	return d.reviewer.validate
}
