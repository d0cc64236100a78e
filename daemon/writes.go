package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/workspace"
	"github.com/quirehq/quire/templates"
)

// virtualFiles are supplied by the caller and rendered in the system
// prompt; they are not workspace files.
var virtualFiles = map[string]bool{"DELEGATION.md": true, "TEAM.md": true, "AVAILABILITY.md": true}

// fileClass says what the daemon may do with a path written through the API.
type fileClass int

const (
	classRefused fileClass = iota
	classWritable
	classPersona
)

// ETag returns the entity tag of content: its memory hash, quoted.
func ETag(content []byte) string { return `"` + memory.Hash(content) + `"` }

// cleanPath checks a file path of the API: relative, slash-separated,
// without . or .. elements. A path that tries to escape is a 400.
func cleanPath(p string) (string, error) {
	if p == "" || strings.Contains(p, `\`) || strings.ContainsRune(p, 0) || !fs.ValidPath(p) || p == "." {
		return "", api.Errorf(api.CodeBadPath, "path %q is not a clean relative path inside the agent workspace", p)
	}
	for _, el := range strings.Split(p, "/") {
		if strings.EqualFold(el, ".git") {
			return "", api.Errorf(api.CodeBadPath, "path %q reaches into .git", p)
		}
	}
	return p, nil
}

// classify says what a write may do to rel (relative to the agent's or
// the user's directory) by its kind (workspace.KindOf): memory is
// written, a persona file (workspace.PersonaFiles) may only change
// through a proposal branch.
func classify(rel string, perUser bool) (fileClass, string) {
	if _, _, ok := workspace.SplitUser(rel); ok {
		return classRefused, fmt.Sprintf("%s: a user's files are written with ?user=ID, not by their users/ path", rel)
	}
	switch workspace.KindOf(rel) {
	case workspace.KindMemory, workspace.KindDailyLog:
		return classWritable, ""
	case workspace.KindPerUser:
		if perUser {
			return classWritable, ""
		}
		return classRefused, fmt.Sprintf("%s is written per user: pass ?user=ID", rel)
	case workspace.KindPersona:
		return classPersona, ""
	}
	return classRefused, fmt.Sprintf("%s is outside the write allow list (memory files, and a user's USER.md and BOOTSTRAP.md; persona files become proposals)", rel)
}

// scope returns the directory of the request's files relative to the
// agent directory: "" for agent-level files, users/<dir> for a user's.
func scope(user string) (string, error) {
	if user == "" {
		return "", nil
	}
	enc, err := prompt.EncodeID(user)
	if err != nil {
		return "", api.Errorf(api.CodeBadUser, "user %q cannot name a directory: %v", user, err)
	}
	return prompt.UsersDir + "/" + enc, nil
}

func joinSlash(elems ...string) string {
	var kept []string
	for _, e := range elems {
		if e != "" && e != "." {
			kept = append(kept, e)
		}
	}
	return path.Join(kept...)
}

// ReadFile implements api.Backend.
func (d *Daemon) ReadFile(ctx context.Context, agent, user, p string) (api.File, error) {
	ref, err := d.agent(agent)
	if err != nil {
		return api.File{}, err
	}
	rel, err := cleanPath(p)
	if err != nil {
		return api.File{}, err
	}
	if virtualFiles[rel] {
		return api.File{}, api.Errorf(api.CodeVirtualFile, "%s is a virtual file: the caller supplies it and it is already in the system prompt", rel)
	}
	sc, err := scope(user)
	if err != nil {
		return api.File{}, err
	}
	full := joinSlash(ref.ag.agent.Dir, sc, rel)
	b, err := fs.ReadFile(ref.dep.fsys, full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return api.File{}, api.Errorf(api.CodeNotFound, "agent %q has no file %s", agent, joinSlash(sc, rel))
		}
		return api.File{}, api.Errorf(api.CodeBadPath, "read %s: %v", joinSlash(sc, rel), err)
	}
	return api.File{Path: joinSlash(sc, rel), Content: string(b), ETag: ETag(b), Commit: ref.dep.commit}, nil
}

// ifMatches applies If-Match: "*" creates a file and never replaces one;
// otherwise one of the listed ETags must be the file's.
func ifMatches(ifMatch string, cur []byte, exists bool) bool {
	if ifMatch == "*" {
		return !exists
	}
	if !exists {
		return false
	}
	// If-Match compares strongly (RFC 9110 §13.1.1): a weak tag (W/"…")
	// never matches.
	want := ETag(cur)
	for _, t := range strings.Split(ifMatch, ",") {
		t = strings.TrimSpace(t)
		if strings.HasPrefix(t, "W/") {
			continue
		}
		if t == want || `"`+t+`"` == want {
			return true
		}
	}
	return false
}

// WriteFile implements api.Backend (behavior.md §7).
func (d *Daemon) WriteFile(ctx context.Context, agent, user, p, ifMatch string, content []byte) (api.WriteResponse, error) {
	ref, err := d.agent(agent)
	if err != nil {
		return api.WriteResponse{}, err
	}
	rel, err := cleanPath(p)
	if err != nil {
		return api.WriteResponse{}, err
	}
	sc, err := scope(user)
	if err != nil {
		return api.WriteResponse{}, err
	}
	if virtualFiles[rel] {
		return api.WriteResponse{}, api.Errorf(api.CodeVirtualFile, "%s is a virtual file supplied by the caller; it cannot be written", rel)
	}
	class, why := classify(rel, user != "")
	if class == classRefused {
		return api.WriteResponse{}, api.Errorf(api.CodeNotWritable, "%s", why)
	}
	cfg := ref.ag.agent.Config
	if limit := cfg.WriteLimitBytes; limit > 0 && len(content) > limit {
		return api.WriteResponse{}, api.Errorf(api.CodeWriteLimit,
			"%d bytes exceed agent %q's write_limit_bytes of %d; nothing was written (writes are never truncated)", len(content), agent, limit)
	}
	if !utf8.Valid(content) {
		return api.WriteResponse{}, api.Errorf(api.CodeNotUTF8, "%s must be valid UTF-8", rel)
	}
	full := joinSlash(ref.ag.agent.Dir, sc, rel)
	del := templates.DeletesWhenEmpty(path.Base(rel), content)
	build := func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		cur, err := fs.ReadFile(fsys, full)
		exists := err == nil
		if !ifMatches(ifMatch, cur, exists) {
			if ifMatch == "*" {
				return nil, api.Errorf(api.CodeExists, "%s already exists: If-Match: * only creates a file; send its ETag %s to replace it", joinSlash(sc, rel), ETag(cur))
			}
			if !exists {
				return nil, api.Errorf(api.CodeStale, "%s does not exist (any more); send If-Match: * to create it", joinSlash(sc, rel))
			}
			return nil, api.Errorf(api.CodeStale, "%s changed since you read it: its ETag is now %s; read it again and retry", joinSlash(sc, rel), ETag(cur))
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
	msg := fmt.Sprintf("%s: write %s", agent, joinSlash(sc, rel))
	if del {
		msg = fmt.Sprintf("%s: delete %s (the first run is over)", agent, joinSlash(sc, rel))
	}
	res := api.WriteResponse{Path: joinSlash(sc, rel), Deleted: del}
	if !del {
		res.ETag = ETag(content)
	}
	if class == classPersona {
		if ref.src.kind != kindRepo {
			return api.WriteResponse{}, api.Errorf(api.CodeNotWritable,
				"%s is a persona file: changes become proposal branches, which need a hosted repository (--repos)", rel)
		}
		res.Commit, res.Branch, err = d.propose(ctx, ref, user, msg, build)
		if err != nil {
			return api.WriteResponse{}, pathConflict(err)
		}
		d.events.publish(api.Event{Type: "write", Agent: agent, Source: ref.src.id(), Commit: res.Commit, Path: res.Path, User: user,
			Message: "proposed on " + res.Branch})
		return res, nil
	}
	res.Commit, res.Branch, err = d.commitChange(ctx, ref, user, msg, d.checked(ctx, ref, build))
	return res, pathConflict(err)
}

// pathConflict turns a write through a file (memory/<day>.md/x.md) or
// over a directory into a 409; nothing was written.
func pathConflict(err error) error {
	var pc *gitsync.PathConflictError
	if errors.As(err, &pc) {
		return api.Errorf(api.CodePathConflict, "%v; nothing was written", pc)
	}
	return err
}

// dailyLogPath is memory/YYYY-MM-DD.md of now's date in loc.
func dailyLogPath(now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return prompt.MemoryDir + "/" + now.In(loc).Format("2006-01-02") + ".md"
}

// The years a caller-chosen time may put a daily log in.
const (
	minLogYear = 1970
	maxLogYear = 9999
)

// entryHeading is the heading line of a daily log entry.
var entryHeading = regexp.MustCompile(`^##[ \t]+[0-9]{1,2}:[0-9]{2}\b`)

// entryHeadingLine returns the 1-based number of the first line of text
// that reads as an entry heading ("## 14:05"), or 0: appended text must not
// forge entries of its own.
func entryHeadingLine(text string) int {
	for i, line := range strings.Split(text, "\n") {
		if entryHeading.MatchString(strings.TrimRight(line, "\r")) {
			return i + 1
		}
	}
	return 0
}

// appendEntry adds a "## HH:MM" entry to a daily log.
func appendEntry(cur []byte, now time.Time, text string) []byte {
	var b bytes.Buffer
	if len(bytes.TrimSpace(cur)) == 0 {
		fmt.Fprintf(&b, "# %s\n", now.Format("2006-01-02"))
	} else {
		b.Write(bytes.TrimRight(cur, " \t\r\n"))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n## %s\n\n%s\n", now.Format("15:04"), strings.TrimSpace(text))
	return b.Bytes()
}

// MemoryAppend implements api.Backend: a "## HH:MM" entry in today's
// daily log (agent timezone), the user's own when a user is given.
func (d *Daemon) MemoryAppend(ctx context.Context, agent string, req api.AppendRequest) (api.WriteResponse, error) {
	ref, err := d.agent(agent)
	if err != nil {
		return api.WriteResponse{}, err
	}
	sc, err := scope(req.User)
	if err != nil {
		return api.WriteResponse{}, err
	}
	cfg := ref.ag.agent.Config
	if limit := cfg.WriteLimitBytes; limit > 0 && len(req.Text) > limit {
		return api.WriteResponse{}, api.Errorf(api.CodeWriteLimit,
			"%d bytes exceed agent %q's write_limit_bytes of %d; nothing was written (writes are never truncated)", len(req.Text), agent, limit)
	}
	if !utf8.ValidString(req.Text) {
		return api.WriteResponse{}, api.Errorf(api.CodeNotUTF8, "text must be valid UTF-8")
	}
	now := d.opts.Now()
	if req.Now != nil {
		now = *req.Now
		if y := now.Year(); y < minLogYear || y > maxLogYear {
			return api.WriteResponse{}, badRequest("now %s: a daily log's year must be from %d to %d", now.Format(time.RFC3339), minLogYear, maxLogYear)
		}
	}
	if line := entryHeadingLine(req.Text); line > 0 {
		return api.WriteResponse{}, api.Errorf(api.CodeBadText,
			"text line %d looks like an entry heading (## HH:MM): the daemon writes those; indent the line or reword it", line)
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
		written = appendEntry(cur, now, req.Text)
		if len(written) > gitsync.MaxFileBytes {
			return nil, api.Errorf(api.CodeFileLimit, "%s would grow past the %d-byte file limit", rel, gitsync.MaxFileBytes)
		}
		return []gitsync.FileWrite{{Path: full, Content: written}}, nil
	}
	res := api.WriteResponse{Path: joinSlash(sc, rel)}
	res.Commit, res.Branch, err = d.commitChange(ctx, ref, req.User, fmt.Sprintf("%s: memory entry in %s", agent, res.Path), d.checked(ctx, ref, build))
	if err != nil {
		return api.WriteResponse{}, err
	}
	res.ETag = ETag(written)
	return res, nil
}

// buildFunc computes the writes of one commit from the tree it goes on;
// no writes means nothing to commit.
type buildFunc func(fsys fs.FS) ([]gitsync.FileWrite, error)

func author(agent string, now time.Time) object.Signature {
	return object.Signature{Name: agent, Email: agent + "@quire.invalid", When: now}
}

// commitChange commits a change on the deployed branch (group commit:
// see groupCommit) or writes it to the working tree of a --dir source,
// deploys the result at once and announces it. It returns the commit and
// the branch.
func (d *Daemon) commitChange(ctx context.Context, ref agentRef, user, message string, build buildFunc) (string, string, error) {
	if ref.src.kind != kindDir {
		return d.groupCommit(ctx, ref, user, message, build)
	}
	return d.writeWorkTree(ctx, ref, user, build)
}

// writeWorkTree writes a change into a --dir source's working tree and
// deploys it.
func (d *Daemon) writeWorkTree(ctx context.Context, ref agentRef, user string, build buildFunc) (string, string, error) {
	s := ref.src
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	a := ref.ag.agent
	base := workspace.DirFS(s.dir)
	// build sees a new user's seed files, and the first write for a user
	// stores them with it.
	writes, err := build(&seedFS{base: base, agents: []*prompt.Agent{a}})
	if err != nil {
		return "", "", err
	}
	writes = withSeeds(base, a, user, writes)
	if len(writes) == 0 {
		return "", "", nil
	}
	// os.Root keeps every write inside the tree, symbolic links
	// included.
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return "", "", err
	}
	defer root.Close()
	for _, w := range writes {
		p := filepath.FromSlash(w.Path)
		if w.Delete {
			if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", "", err
			}
			continue
		}
		if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", "", err
		}
		if err := root.WriteFile(p, w.Content, 0o644); err != nil {
			return "", "", api.Errorf(api.CodeBadPath, "write %s: %v", w.Path, err)
		}
	}
	dep, err := d.deployLogged(ctx, s, slog.LevelDebug)
	if err != nil {
		return "", "", err
	}
	d.announceWrites(s, a.Name, user, dep.commit, writes)
	return dep.commit, "", nil
}

func (d *Daemon) announceWrites(s *source, agent, user, commit string, writes []gitsync.FileWrite) {
	for _, w := range writes {
		msg := "written"
		if w.Delete {
			msg = "deleted"
		}
		d.events.publish(api.Event{Type: "write", Agent: agent, Source: s.id(), Commit: commit, Path: w.Path, User: user, Message: msg})
	}
}

// propose commits a persona-file change to a new proposals/<agent>/<n>
// branch that starts at main (people's branch, where a person merges
// it); neither main nor live moves.
func (d *Daemon) propose(ctx context.Context, ref agentRef, user, message string, build buildFunc) (string, string, error) {
	s := ref.src
	agent := ref.ag.agent.Name
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	head, err := s.repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return "", "", fmt.Errorf("resolve main: %w", err)
	}
	snap, err := s.repo.SnapshotOf(head)
	if err != nil {
		return "", "", err
	}
	writes, err := build(snap)
	if err != nil {
		return "", "", err
	}
	if len(writes) == 0 {
		return "", "", api.Errorf(api.CodeNoChange, "nothing to propose")
	}
	prefix := "refs/heads/proposals/" + agent + "/"
	existing, err := s.repo.RefNames(prefix)
	if err != nil {
		return "", "", err
	}
	n := 0
	for _, name := range existing {
		if k, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && k > n {
			n = k
		}
	}
	// Take the next free number; a concurrent proposal that took it first
	// makes Commit refuse (Create), and the next number is tried.
	var h plumbing.Hash
	var branch string
	for try := 0; ; try++ {
		branch = prefix + strconv.Itoa(n+1+try)
		h, err = s.repo.Commit(ctx, gitsync.CommitRequest{Ref: branch, Start: head.String(), Create: true, Writes: writes,
			Author: author(agent, d.opts.Now()), User: user, Message: message + " (proposal)"})
		if !errors.Is(err, gitsync.ErrStale) || try >= 100 {
			break
		}
	}
	if err != nil {
		return "", "", err
	}
	return h.String(), strings.TrimPrefix(branch, "refs/heads/"), nil
}

var dailyLogName = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})\.md$`)

// pruneLoop deletes daily logs older than each agent's retention, soon
// after start and then every PruneInterval.
func (d *Daemon) pruneLoop(ctx context.Context) error {
	t := time.NewTimer(min(time.Minute, d.opts.PruneInterval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, r := range d.agentRefs() {
			if err := d.pruneDailyLogs(ctx, r); err != nil {
				d.log.Warn("pruning daily logs failed", "agent", r.ag.agent.Name, "err", err)
			}
		}
		t.Reset(d.opts.PruneInterval)
	}
}

// pruneDailyLogs deletes the agent's (and its users') daily logs older
// than daily_log_retention_days in one commit.
func (d *Daemon) pruneDailyLogs(ctx context.Context, ref agentRef) error {
	cfg := ref.ag.agent.Config
	if cfg.DailyLogRetentionDays <= 0 {
		return nil
	}
	loc := cfg.Location
	if loc == nil {
		loc = time.UTC
	}
	today := d.opts.Now().In(loc)
	agentDir := ref.ag.agent.Dir
	var pruned []string
	build := func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		pruned = memory.ExpiredLogs(fsys, agentDir, cfg.DailyLogRetentionDays, today)
		var writes []gitsync.FileWrite
		for _, p := range pruned {
			writes = append(writes, gitsync.FileWrite{Path: p, Delete: true})
		}
		return writes, nil
	}
	name := ref.ag.agent.Name
	commit, _, err := d.commitChange(ctx, ref, "", fmt.Sprintf("%s: prune daily logs older than %d days", name, cfg.DailyLogRetentionDays), build)
	if err != nil || commit == "" {
		return err
	}
	d.log.Info("pruned daily logs past their retention", "agent", name, "retention_days", cfg.DailyLogRetentionDays,
		"commit", commit, "files", pruned)
	d.events.publish(api.Event{Type: "prune", Agent: name, Source: ref.src.id(), Commit: commit,
		Message: fmt.Sprintf("pruned %d daily logs older than %d days (daily_log_retention_days): %s", len(pruned), cfg.DailyLogRetentionDays, strings.Join(pruned, ", "))})
	return nil
}
