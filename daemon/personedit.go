package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

// personEdit is a person's write of a file in the console (a session's
// PUT). On a hosted repository (--repos) it is a commit authored by the
// person: on main for a persona file (validated as a push to main is),
// on live for memory (validated as an agent's write is). On a --dir
// source it is written into the working tree, as the person's own editor
// would (validated as an agent's write is). A followed upstream's
// branches are the upstream's: the daemon writes there only as its
// agents, so a person's edit is refused with what to do instead. A stale
// If-Match is refused with the file's current content (api.StaleEdit),
// so the editor loses nothing; a person's first write for a new user
// stores the user's seed files with it, as an agent's does.
type personEdit struct {
	ref     agentRef
	user    string
	persona bool
	full    string // the path in the repository
	shown   string // the path in answers
	ifMatch string
	content []byte
	del     bool
	message string
}

// personWrite writes e for the person of ctx.
func (wr *writer) personWrite(ctx context.Context, e personEdit) (api.WriteResponse, error) {
	switch e.ref.src.kind {
	case kindUpstream:
		return api.WriteResponse{}, api.Errorf(api.CodeNotWritable,
			"%s follows the upstream %s, whose branches the daemon writes only as the agent: a person's edit here would be committed as the agent's. Edit %s in a clone of the upstream and push it there (persona files to main, memory to live)",
			e.ref.ag.agent.Name, e.ref.src.name, e.full)
	case kindDir:
		return wr.personWorkTree(ctx, e)
	}
	return wr.personCommit(ctx, e)
}

// personBuild is e's change: refused as stale (with the current
// content) when e's If-Match does not hold on the tree, where names.
func personBuild(e personEdit, where string) buildFunc {
	replace := replaceFile(e.full, e.shown, e.ifMatch, e.content, e.del)
	return func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		if err := staleEdit(fsys, e, where); err != nil {
			return nil, err
		}
		return replace(fsys)
	}
}

// personWorkTree writes e into a --dir source's working tree.
func (wr *writer) personWorkTree(ctx context.Context, e personEdit) (api.WriteResponse, error) {
	sig := personSignature(ctx, wr.now(), wr.log)
	c, err := diskFull(wr.writeWorkTree(ctx, e.ref, e.user, gitsync.WriteKey{}, wr.checked(ctx, e.ref, personBuild(e, "in the working tree"))))
	if err != nil {
		return api.WriteResponse{}, pathConflict(err)
	}
	res := api.WriteResponse{Path: e.shown, Deleted: e.del, Commit: c.commit}
	if !e.del {
		res.ETag = ETag(e.content)
	}
	wr.log.Info("a person edited a file", "agent", e.ref.ag.agent.Name, "path", e.shown, "in", e.ref.src.id(), "by", sig.Name)
	return res, nil
}

// personCommit commits e on a hosted repository for the person of ctx.
func (wr *writer) personCommit(ctx context.Context, e personEdit) (api.WriteResponse, error) {
	s := e.ref.src
	if err := s.writes.lock.LockContext(ctx); err != nil {
		return api.WriteResponse{}, wr.notApplied(s)
	}
	defer s.writes.lock.Unlock()
	branch := gitsync.LiveRef
	if e.persona {
		branch = gitsync.MainRef
	}
	head, err := s.repo.Resolve(branch.String())
	if err != nil {
		return api.WriteResponse{}, fmt.Errorf("resolve %s: %w", branch.Short(), err)
	}
	snap, err := s.repo.SnapshotOf(head)
	if err != nil {
		return api.WriteResponse{}, err
	}
	build := personBuild(e, "on "+branch.Short())
	if !e.persona {
		build = wr.checked(ctx, e.ref, build)
	}
	// The build sees a new user's seed files, and a person's first
	// write for a user stores them with it (as an agent's does).
	a := e.ref.ag.agent
	writes, err := build(&seedFS{base: snap, agents: []*prompt.Agent{a}})
	if err != nil {
		return api.WriteResponse{}, err
	}
	writes = withSeeds(snap, a, e.user, writes)
	res := api.WriteResponse{Path: e.shown, Branch: branch.Short(), Deleted: e.del}
	if !e.del {
		res.ETag = ETag(e.content)
	}
	if len(writes) == 0 {
		res.Commit = head.String()
		return res, nil
	}
	sig := personSignature(ctx, wr.now(), wr.log)
	commit, err := s.repo.CommitOn(ctx, head, gitsync.CommitRequest{Writes: writes, Author: sig, User: e.user, Message: e.message + " (by " + sig.Name + ")"})
	if err != nil {
		return api.WriteResponse{}, pathConflict(err)
	}
	if e.persona {
		err = wr.review.moveMain(ctx, s, head, commit)
	} else if err = s.repo.UpdateRef(branch, head, commit); errors.Is(err, gitsync.ErrStale) {
		err = api.Errorf(api.CodeStale, "live moved meanwhile; save again")
	}
	if err != nil {
		return api.WriteResponse{}, err
	}
	if _, err := wr.deployer.deployLogged(context.WithoutCancel(ctx), s, slog.LevelInfo); err != nil {
		wr.log.Warn("deploy after a person's edit failed", "source", s.id(), "err", err)
	}
	res.Commit = commit.String()
	wr.log.Info("a person edited a file", "agent", a.Name, "path", e.shown, "branch", branch.Short(), "by", sig.Name, "commit", short(res.Commit))
	wr.events.publish(api.Event{Type: "write", Agent: a.Name, Source: s.id(), Commit: res.Commit, Path: e.shown, User: e.user,
		Message: "edited by " + sig.Name + " on " + branch.Short()})
	return res, nil
}

// staleEdit refuses e when its If-Match does not hold on tree (where
// says which: "on main", "in the working tree"): the answer carries the
// file as it is there.
func staleEdit(tree fs.FS, e personEdit, where string) error {
	cur, err := fs.ReadFile(tree, e.full)
	if ifMatches(e.ifMatch, cur, err == nil) {
		return nil
	}
	stale := &api.StaleEdit{Err: api.Errorf(api.CodePreconditionFailed, "%s changed %s since you read it: its version there is in this answer; merge your text into it and save again", e.shown, where),
		Content: string(cur), Deleted: err != nil}
	if err == nil {
		stale.ETag = ETag(cur)
	}
	return stale
}
