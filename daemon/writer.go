package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

// writer turns the API's writes into commits on live: it checks a write
// (path, allow list, limits, If-Match), validates the tree it would make
// as a push would be (checked), and commits it — grouped with concurrent
// writes (groupCommit) on a hosted repository's live, pushed with
// compare-and-swap to a followed upstream's live (commitUpstream), or
// written into a --dir working tree — then has the deployer deploy the
// result and announces it. Persona files become proposal branches
// (propose). It also prunes daily logs past their retention.
type writer struct {
	sources  *sourceSet
	deployer *deployer
	// tokens is the token count cache the validation of a write shares
	// with deployments.
	tokens        *prompt.Tokenizer
	events        *broker
	log           *slog.Logger
	now           func() time.Time
	pruneInterval time.Duration
	// writeTimeout bounds an API write from its arrival, waiting for
	// other writes included (Options.WriteTimeout).
	writeTimeout time.Duration
	// review moves main for a person's edit of a persona file.
	review *reviewer
	// llm is the model summoning and consolidation ask (Options.LLM;
	// nil: none, see drafts.go).
	llm *llm.Client
}

// writeState is a source's writes under way. The writer owns it: the
// lock that makes the daemon's commits on the source one at a time, the
// API writes waiting for a group commit, and the index of the write keys
// live holds. The zero value is ready to use.
type writeState struct {
	// lock: one commit by the daemon at a time, granted in arrival
	// order; a write's wait for it counts against its deadline.
	lock  gitsync.QueueLock
	queue writeQueue // API writes waiting for their commit
	keys  writeKeys  // the write keys in live's recent history
	// checked are the texts that last passed a write's checks, by path.
	checked checkedTexts
}

// deadline bounds an API write: it is answered by then (and
// answerGrace).
func (wr *writer) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, wr.writeTimeout)
}

// fileTarget resolves what a write or a deletion of path p names: the
// agent, the path cleaned, the user's scope, and the file's class, which
// checkFileWrite decides (content nil for a deletion).
func (wr *writer) fileTarget(agent, user, p string, content []byte) (agentRef, string, string, fileClass, error) {
	ref, err := wr.sources.agent(agent)
	if err != nil {
		return agentRef{}, "", "", 0, err
	}
	rel, err := cleanPath(p)
	if err != nil {
		return agentRef{}, "", "", 0, err
	}
	sc, err := scope(user)
	if err != nil {
		return agentRef{}, "", "", 0, err
	}
	class, err := checkFileWrite(ref, rel, user, content)
	return ref, rel, sc, class, err
}

// WriteFile implements api.Backend (behavior.md §7).
func (wr *writer) WriteFile(ctx context.Context, agent, user, p, ifMatch string, content []byte) (api.WriteResponse, error) {
	ctx, cancel := wr.deadline(ctx)
	defer cancel()
	ref, rel, sc, class, err := wr.fileTarget(agent, user, p, content)
	if err != nil {
		return api.WriteResponse{}, err
	}
	full := joinSlash(ref.ag.agent.Dir, sc, rel)
	del := templates.DeletesWhenEmpty(path.Base(rel), content)
	build := replaceFile(full, joinSlash(sc, rel), ifMatch, content, del)
	msg := fmt.Sprintf("%s: write %s", agent, joinSlash(sc, rel))
	if del {
		msg = fmt.Sprintf("%s: delete %s (the first run is over)", agent, joinSlash(sc, rel))
	}
	res := api.WriteResponse{Path: joinSlash(sc, rel), Deleted: del}
	if !del {
		res.ETag = ETag(content)
	}
	if api.GrantOf(ctx) != nil {
		// A person in the console: their change, not the agent's.
		return wr.personWrite(ctx, personEdit{ref: ref, user: user, persona: class == classPersona, full: full, shown: res.Path,
			ifMatch: ifMatch, content: content, del: del, message: msg})
	}
	key := wr.writeKey(ctx, agent, user, res.Path)
	if class == classPersona {
		if ref.src.kind != kindRepo {
			return api.WriteResponse{}, api.Errorf(api.CodeNotWritable,
				"%s is a persona file: changes become proposal branches, which need a hosted repository (--repos)", rel)
		}
		if c, ok := sameProposal(ref.src, agent, full, ifMatch); ok {
			// The same ETag again: the proposal it opened answers.
			return wr.replayed(ref, committed{commit: c.commit, branch: c.branch, replay: &keyHit{commit: c.commit, path: res.Path}}), nil
		}
		c, err := wr.propose(ctx, ref, user, msg, key, build)
		if err != nil {
			return api.WriteResponse{}, pathConflict(err)
		}
		if c.replay != nil {
			return wr.replayed(ref, c), nil
		}
		res.Commit, res.Branch = c.commit, c.branch
		wr.log.Info("proposal opened", "agent", agent, "path", res.Path, "user", user, "branch", res.Branch, "commit", short(res.Commit))
		res.Budget = wr.budgetAfter(ref, ref.dep.fsys, user, full, writtenContent(content, del), wr.now())
		wr.events.publish(api.Event{Type: "write", Agent: agent, Source: ref.src.id(), Commit: res.Commit, Path: res.Path, User: user,
			Message: "proposed on " + res.Branch})
		return res, nil
	}
	c, err := wr.commitChange(ctx, ref, user, msg, key, wr.checked(ctx, ref, build))
	if err != nil {
		return api.WriteResponse{}, pathConflict(err)
	}
	if c.replay != nil {
		return wr.replayed(ref, c), nil
	}
	res.Commit, res.Branch = c.commit, c.branch
	res.Budget = wr.writeBudget(ref, c.tree, user, full, writtenContent(content, del), wr.now())
	return res, nil
}

// writtenContent is what a write leaves in its file: content, or nil
// for a deletion.
func writtenContent(content []byte, del bool) []byte {
	if del {
		return nil
	}
	if content == nil {
		return []byte{}
	}
	return content
}

// checkFileWrite checks a write of content to rel (relative to the
// user's directory when user is set) against the rules of a write: not
// a virtual file, in the write allow list, within the agent's write
// limit, printable UTF-8 text. It returns the file's class.
func checkFileWrite(ref agentRef, rel, user string, content []byte) (fileClass, error) {
	if workspace.IsVirtualFile(rel) {
		return classRefused, api.Errorf(api.CodeVirtualFile, "%s is a virtual file, built from agent.yaml or supplied by the caller; it cannot be written", rel)
	}
	class, why := classify(rel, user != "")
	if class == classRefused {
		return classRefused, api.Errorf(api.CodeNotWritable, "%s", why)
	}
	if limit := ref.ag.agent.Config.WriteLimitBytes; limit > 0 && len(content) > limit {
		return classRefused, api.Errorf(api.CodeWriteLimit,
			"%d bytes exceed agent %q's write_limit_bytes of %d; nothing was written (writes are never truncated)", len(content), ref.ag.agent.Name, limit)
	}
	if !utf8.Valid(content) {
		return classRefused, api.Errorf(api.CodeNotUTF8, "%s must be valid UTF-8", rel)
	}
	if err := workspace.CheckText("content", content); err != nil {
		return classRefused, api.Errorf(api.CodeBadRequest, "%v", err)
	}
	return class, nil
}

// replaceFile is the build of a write of content to full (shown as
// shown in answers) under ifMatch, or of its deletion (del): the file
// on the tree the commit goes on must match, or the write is refused.
func replaceFile(full, shown, ifMatch string, content []byte, del bool) buildFunc {
	return func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		cur, err := fs.ReadFile(fsys, full)
		exists := err == nil
		if !ifMatches(ifMatch, cur, exists) {
			if ifMatch == "*" {
				return nil, api.Errorf(api.CodeExists, "%s already exists: If-Match: * only creates a file; send its ETag %s to replace it", shown, ETag(cur))
			}
			if !exists {
				return nil, api.Errorf(api.CodeStale, "%s does not exist (any more); send If-Match: * to create it", shown)
			}
			return nil, api.Errorf(api.CodeStale, "%s changed since you read it: its ETag is now %s; read it again and retry", shown, ETag(cur))
		}
		if del {
			if !exists {
				return nil, nil
			}
			return []gitsync.FileWrite{{Path: full, Delete: true}}, nil
		}
		w := gitsync.FileWrite{Path: full, Content: content}
		if ifMatch == "*" {
			// Checked again under the writer lock: the file must still
			// not exist.
			w.Match = new(plumbing.Hash)
		}
		return []gitsync.FileWrite{w}, nil
	}
}

// writeKey is the write's idempotency key (the request's, scoped by agent
// and user: ID "" when it has none) with the path it answers with.
func (wr *writer) writeKey(ctx context.Context, agent, user, path string) gitsync.WriteKey {
	k := gitsync.WriteKey{Path: path}
	if key := api.IdempotencyKey(ctx); key != "" {
		k.ID = writeKeyID(agent, user, key)
	}
	return k
}

// replayed answers a retry of a write live already holds: its commit and
// path, and the file as of that commit.
func (wr *writer) replayed(ref agentRef, c committed) api.WriteResponse {
	res := api.WriteResponse{Path: c.replay.path, Commit: c.replay.commit, Branch: c.branch}
	var fsys fs.FS
	if h := plumbing.NewHash(c.replay.commit); ref.src.repo != nil && h.String() == c.replay.commit {
		if snap, err := ref.src.repo.SnapshotOf(h); err == nil {
			fsys = snap
		}
	} else if ref.src.kind == kindDir {
		fsys = workspace.DirFS(ref.src.dir)
	}
	if fsys != nil {
		full := joinSlash(ref.ag.agent.Dir, c.replay.path)
		b, err := fs.ReadFile(fsys, full)
		switch {
		case err == nil:
			res.ETag = ETag(b)
			res.Budget = wr.budgetAfter(ref, ref.dep.fsys, userOfPath(c.replay.path), full, b, wr.now())
		case errors.Is(err, fs.ErrNotExist):
			res.Deleted = true
		}
	}
	return res
}

// MemoryAppend implements api.Backend: a "## HH:MM" entry in today's
// daily log (agent timezone), the user's own when a user is given.
func (wr *writer) MemoryAppend(ctx context.Context, agent string, req api.AppendRequest) (api.WriteResponse, error) {
	ctx, cancel := wr.deadline(ctx)
	defer cancel()
	ref, err := wr.sources.agent(agent)
	if err != nil {
		return api.WriteResponse{}, err
	}
	sc, err := scope(req.User)
	if err != nil {
		return api.WriteResponse{}, err
	}
	if len(req.Agents) > 0 {
		return wr.teamAppend(ctx, ref, sc, req)
	}
	cfg := ref.ag.agent.Config
	now, err := wr.checkAppend(agent, cfg.WriteLimitBytes, req)
	if err != nil {
		return api.WriteResponse{}, err
	}
	loc := cfg.Location
	if loc == nil {
		loc = time.UTC
	}
	now = now.In(loc)
	rel := dailyLogPath(now, loc)
	full := joinSlash(ref.ag.agent.Dir, sc, rel)
	var written []byte
	build := func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		cur, _ := fs.ReadFile(fsys, full)
		written = appendEntry(cur, now, req.Room, req.User, req.Text)
		if len(written) > workspace.MaxFileBytes {
			return nil, api.Errorf(api.CodeFileLimit, "%s would grow past the %d-byte file limit", rel, workspace.MaxFileBytes)
		}
		return []gitsync.FileWrite{{Path: full, Content: written}}, nil
	}
	res := api.WriteResponse{Path: joinSlash(sc, rel)}
	c, err := wr.commitChange(ctx, ref, req.User, fmt.Sprintf("%s: memory entry in %s", agent, res.Path),
		wr.writeKey(ctx, agent, req.User, res.Path), wr.checked(ctx, ref, build))
	if err != nil {
		return api.WriteResponse{}, err
	}
	if c.replay != nil {
		return wr.replayed(ref, c), nil
	}
	res.Commit, res.Branch = c.commit, c.branch
	res.ETag = ETag(written)
	res.Budget = wr.writeBudget(ref, c.tree, req.User, full, written, now)
	return res, nil
}

// checkAppend refuses a memory entry the agent's write limit or the
// daily log's rules do not allow, and returns the entry's time: the
// request's, or now.
func (wr *writer) checkAppend(agent string, limit int, req api.AppendRequest) (time.Time, error) {
	if limit > 0 && len(req.Text) > limit {
		return time.Time{}, api.Errorf(api.CodeWriteLimit,
			"%d bytes exceed agent %q's write_limit_bytes of %d; nothing was written (writes are never truncated)", len(req.Text), agent, limit)
	}
	if !utf8.ValidString(req.Text) {
		return time.Time{}, api.Errorf(api.CodeNotUTF8, "text must be valid UTF-8")
	}
	if err := workspace.CheckText("text", req.Text); err != nil {
		return time.Time{}, api.Errorf(api.CodeBadRequest, "%v", err)
	}
	now := wr.now()
	if req.Now != nil {
		now = *req.Now
		if y := now.Year(); y < minLogYear || y > maxLogYear {
			return time.Time{}, badRequest("now %s: a daily log's year must be from %d to %d", now.Format(time.RFC3339), minLogYear, maxLogYear)
		}
	}
	if strings.ContainsAny(req.Room, "\r\n") || workspace.CheckText("room", req.Room) != nil {
		return time.Time{}, badRequest("room %q: a room id is one line of printable text", req.Room)
	}
	if line := entryHeadingLine(req.Text); line > 0 {
		return time.Time{}, api.Errorf(api.CodeBadText,
			"text line %d looks like an entry heading (## HH:MM): the daemon writes those; indent the line or reword it", line)
	}
	return now, nil
}

// commitChange commits a change on the deployed branch (group commit:
// see groupCommit) or writes it to the working tree of a --dir source,
// deploys the result at once and announces it. It returns the commit and
// the branch, or where live already holds a write with key.ID.
func (wr *writer) commitChange(ctx context.Context, ref agentRef, user, message string, key gitsync.WriteKey, build buildFunc) (committed, error) {
	if ref.src.kind != kindDir {
		return diskFull(wr.groupCommit(ctx, ref, user, message, key, build))
	}
	return diskFull(wr.writeWorkTree(ctx, ref, user, key, build))
}

// writeWorkTree writes a change into a --dir source's working tree and
// deploys it. A key is remembered in memory only (until a restart).
func (wr *writer) writeWorkTree(ctx context.Context, ref agentRef, user string, key gitsync.WriteKey, build buildFunc) (committed, error) {
	s := ref.src
	if err := s.writes.lock.LockContext(ctx); err != nil {
		return committed{}, wr.notApplied(s)
	}
	defer s.writes.lock.Unlock()
	if hit, ok := s.writes.keys.lookup(key.ID); ok && key.ID != "" {
		return committed{commit: hit.commit, replay: &hit}, nil
	}
	a := ref.ag.agent
	base := workspace.DirFS(s.dir)
	// build sees a new user's seed files, and the first write for a user
	// stores them with it.
	writes, err := build(&seedFS{base: base, agents: []*prompt.Agent{a}})
	if err != nil {
		return committed{}, err
	}
	writes = withSeeds(base, a, user, writes)
	if len(writes) == 0 {
		return committed{}, nil
	}
	// os.Root keeps every write inside the tree, symbolic links
	// included.
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return committed{}, err
	}
	defer root.Close()
	for _, w := range writes {
		p := filepath.FromSlash(w.Path)
		if w.Delete {
			if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return committed{}, err
			}
			continue
		}
		if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return committed{}, err
		}
		if err := root.WriteFile(p, w.Content, 0o644); err != nil {
			if gitsync.DiskFull(err) != nil {
				return committed{}, err // 507 (see diskFull)
			}
			return committed{}, api.Errorf(api.CodeBadPath, "write %s: %v", w.Path, err)
		}
	}
	dep, err := wr.deployer.deployLogged(context.WithoutCancel(ctx), s, slog.LevelDebug)
	if err != nil {
		return committed{}, err
	}
	if key.ID != "" {
		s.writes.keys.add(key.ID, keyHit{commit: dep.commit, path: key.Path})
	}
	wr.announceWrites(s, a.Name, user, dep.commit, writes)
	return committed{commit: dep.commit}, nil
}

func (wr *writer) announceWrites(s *source, agent, user, commit string, writes []gitsync.FileWrite) {
	for _, w := range writes {
		msg := "written"
		if w.Delete {
			msg = "deleted"
		}
		wr.events.publish(api.Event{Type: "write", Agent: agent, Source: s.id(), Commit: commit, Path: w.Path, User: user, Message: msg})
	}
}
