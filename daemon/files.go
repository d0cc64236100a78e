package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/workspace"
)

// kindNames are the API's names of workspace kinds.
var kindNames = map[workspace.Kind]string{
	workspace.KindOther: "other", workspace.KindConfig: "config", workspace.KindPersona: "persona",
	workspace.KindContext: "context", workspace.KindPerUser: "per_user", workspace.KindMemory: "memory",
	workspace.KindDailyLog: "daily_log", workspace.KindSkill: "skill",
}

// ListFiles implements api.Backend: the files of the agent's directory
// (its users' directories and other agents' left out) or, with a user, of
// the user's directory — a new user's seeds (USER.md, BOOTSTRAP.md) marked
// as such — with their sizes, ETags and kinds, sorted by path.
func (rd *reader) ListFiles(ctx context.Context, agent, user string) (api.FileList, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.FileList{}, err
	}
	sc, err := scope(user)
	if err != nil {
		return api.FileList{}, err
	}
	dir := ref.ag.agent.Dir
	root := joinSlash(dir, sc)
	if root == "" {
		root = "."
	}
	others := map[string]bool{}
	for _, a := range ref.dep.ws.Agents() {
		others[a.Dir] = a.Dir != dir
	}
	var out []api.FileEntry
	err = fs.WalkDir(ref.dep.base, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return nil // a new user: only seeds
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel := agentRel(dir, p)
		if d.IsDir() {
			if p != root && (others[p] || d.Name() == ".git" || (sc == "" && rel == workspace.UsersDir)) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := fs.ReadFile(ref.dep.base, p)
		if err != nil {
			return fmt.Errorf("list %s: %w", rel, err)
		}
		out = append(out, api.FileEntry{Path: rel, Size: int64(len(b)), ETag: ETag(b), Kind: kindNames[workspace.KindOf(rel)]})
		return nil
	})
	if err != nil {
		return api.FileList{}, api.Errorf(api.CodeUnreadable, "list the files of agent %q: %v", agent, err)
	}
	if user != "" {
		out = append(out, seedEntries(ref, root, sc)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return api.FileList{Files: out, Commit: ref.dep.commit}, nil
}

// seedEntries are the files a user with no directory yet (root) reads
// from the templates.
func seedEntries(ref agentRef, root, sc string) []api.FileEntry {
	var out []api.FileEntry
	for name, b := range seedFiles(ref.dep.base, ref.ag.agent, root) {
		rel := joinSlash(sc, name)
		out = append(out, api.FileEntry{Path: rel, Size: int64(len(b)), ETag: ETag(b), Kind: kindNames[workspace.KindOf(rel)], Seed: true})
	}
	return out
}

// agentRel is p relative to the agent directory dir ("" for dir itself).
func agentRel(dir, p string) string {
	if dir == "." || dir == "" {
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
}

// DeleteFile implements api.Backend: the deletion of a file a write may
// change, under If-Match ("*": whatever it holds), as a commit on live —
// or, for a persona file, a proposal. Daily logs are append-only.
func (wr *writer) DeleteFile(ctx context.Context, agent, user, p, ifMatch string) (api.WriteResponse, error) {
	ctx, cancel := wr.deadline(ctx)
	defer cancel()
	ref, rel, sc, class, err := wr.fileTarget(agent, user, p, nil)
	if err != nil {
		return api.WriteResponse{}, err
	}
	shown := joinSlash(sc, rel)
	build := removeFile(joinSlash(ref.ag.agent.Dir, sc, rel), shown, ifMatch)
	msg := fmt.Sprintf("%s: delete %s", agent, shown)
	key := wr.writeKey(ctx, agent, user, shown)
	var c committed
	if class == classPersona {
		if ref.src.kind != kindRepo {
			return api.WriteResponse{}, api.Errorf(api.CodeNotWritable, "%s is a persona file: its deletion becomes a proposal branch, which needs a hosted repository (--repos)", rel)
		}
		c, err = wr.propose(ctx, ref, user, msg, key, build)
	} else {
		c, err = wr.commitChange(ctx, ref, user, msg, key, wr.checked(ctx, ref, build))
	}
	if err != nil {
		return api.WriteResponse{}, pathConflict(err)
	}
	if c.replay != nil {
		return wr.replayed(ref, c), nil
	}
	res := api.WriteResponse{Path: shown, Deleted: true, Commit: c.commit, Branch: c.branch, Budget: api.BudgetStatus{Status: api.BudgetNotInPrompt}}
	if class == classPersona {
		wr.events.publish(api.Event{Type: "write", Agent: agent, Source: ref.src.id(), Commit: res.Commit, Path: res.Path, User: user, Message: "proposed on " + res.Branch})
	}
	return res, nil
}

// removeFile is the build of a deletion of full (shown as shown) under
// ifMatch: the file must exist and, unless ifMatch is "*", hold the
// content ifMatch names.
func removeFile(full, shown, ifMatch string) buildFunc {
	return func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		cur, err := fs.ReadFile(fsys, full)
		if err != nil {
			return nil, api.Errorf(api.CodeNotFound, "%s does not exist (any more): nothing to delete", shown)
		}
		if ifMatch != "*" && !ifMatches(ifMatch, cur, true) {
			return nil, api.Errorf(api.CodeStale, "%s changed since you read it: its ETag is now %s; read it again and retry", shown, ETag(cur))
		}
		return []gitsync.FileWrite{{Path: full, Delete: true}}, nil
	}
}
