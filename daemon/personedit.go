package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
)

// personEdit is a person's write of a file in the console (a session's
// PUT): a commit authored by the person, on main for a persona file
// (validated as a push to main is) and on live for memory (validated as
// an agent's write is). A stale If-Match is refused with the file's
// current content (api.StaleEdit), so the editor loses nothing.
type personEdit struct {
	ref     agentRef
	persona bool
	full    string // the path in the repository
	shown   string // the path in answers
	ifMatch string
	content []byte
	del     bool
	message string
}

// personWrite commits e for the person of ctx.
func (wr *writer) personWrite(ctx context.Context, e personEdit) (api.WriteResponse, error) {
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
	if err := staleEdit(snap, e, branch); err != nil {
		return api.WriteResponse{}, err
	}
	build := replaceFile(e.full, e.shown, e.ifMatch, e.content, e.del)
	if !e.persona {
		build = wr.checked(ctx, e.ref, build)
	}
	writes, err := build(snap)
	if err != nil {
		return api.WriteResponse{}, err
	}
	res := api.WriteResponse{Path: e.shown, Branch: branch.Short(), Deleted: e.del}
	if !e.del {
		res.ETag = ETag(e.content)
	}
	if len(writes) == 0 {
		res.Commit = head.String()
		return res, nil
	}
	sig := personSignature(ctx, wr.now(), wr.log)
	commit, err := s.repo.CommitOn(ctx, head, gitsync.CommitRequest{Writes: writes, Author: sig, Message: e.message + " (by " + sig.Name + ")"})
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
	wr.log.Info("a person edited a file", "agent", e.ref.ag.agent.Name, "path", e.shown, "branch", branch.Short(), "by", sig.Name, "commit", short(res.Commit))
	wr.events.publish(api.Event{Type: "write", Agent: e.ref.ag.agent.Name, Source: s.id(), Commit: res.Commit, Path: e.shown,
		Message: "edited by " + sig.Name + " on " + branch.Short()})
	return res, nil
}

// staleEdit refuses e when its If-Match does not hold on the branch's
// tree: the answer carries the file as it is there.
func staleEdit(tree fs.FS, e personEdit, branch plumbing.ReferenceName) error {
	cur, err := fs.ReadFile(tree, e.full)
	if ifMatches(e.ifMatch, cur, err == nil) {
		return nil
	}
	stale := &api.StaleEdit{Err: api.Errorf(api.CodePreconditionFailed, "%s changed on %s since you read it: its version there is in this answer; merge your text into it and save again", e.shown, branch.Short()),
		Content: string(cur), Deleted: err != nil}
	if err == nil {
		stale.ETag = ETag(cur)
	}
	return stale
}
