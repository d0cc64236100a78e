package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/workspace"
	"github.com/quirehq/quire/skills"
)

type sourceKind string

const (
	kindRepo     sourceKind = "repo"
	kindUpstream sourceKind = "upstream"
	kindDir      sourceKind = "dir"
)

// source is one source of truth: a hosted repository, a followed upstream
// or a working tree. Every agent knows its source.
type source struct {
	kind     sourceKind
	name     string // repository name, upstream URL or directory
	rootName string // the agent name of a repository without agent.yaml
	repo     *gitsync.Repository
	refs     []string // the deployed ref, first that resolves
	dir      string

	// cur is the deployment requests read: swapped atomically, so a
	// request sees the old or the new revision, never a mix.
	cur atomic.Pointer[deployment]

	deployMu sync.Mutex // one deploy at a time
	writeMu  sync.Mutex // one commit by the daemon at a time
	queue    writeQueue // API writes waiting for their commit
	seq      atomic.Uint64

	// follower fetches an upstream source (nil otherwise).
	follower *gitsync.Follower
	fetched  chan struct{} // a fetch moved refs

	mu       sync.Mutex
	lastErr  string
	fetchErr string                       // the last fetch's error ("" when it worked)
	indexed  map[string]string            // agent → indexed commit
	stats    map[string]memory.IndexStats // agent → stats of the last index run
	indexErr map[string]string            // agent → last index error
	// unindexedSince is, per agent, when the oldest deployment not yet
	// indexed was deployed: the lag that status reports, which a newer
	// deployment does not reset.
	unindexedSince map[string]time.Time
	notify         chan struct{} // closed and replaced after each index run
}

func (s *source) init() {
	s.indexed = map[string]string{}
	s.stats = map[string]memory.IndexStats{}
	s.indexErr = map[string]string{}
	s.unindexedSince = map[string]time.Time{}
	s.notify = make(chan struct{})
}

func (s *source) id() string { return string(s.kind) + ":" + s.name }

// upstreamLive and upstreamMain are an upstream's branches as fetched.
const (
	upstreamLive = plumbing.ReferenceName("refs/remotes/upstream/live")
	upstreamMain = plumbing.ReferenceName("refs/remotes/upstream/main")
)

func (s *source) setFetchError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.fetchErr = ""
	} else {
		s.fetchErr = err.Error()
	}
}

func (s *source) setError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.lastErr = ""
	} else {
		s.lastErr = err.Error()
	}
}

// head resolves the deployed ref.
func (s *source) head() (plumbing.Hash, string, error) {
	var last error
	for _, r := range s.refs {
		h, err := s.repo.Resolve(r)
		if err == nil {
			return h, r, nil
		}
		last = err
	}
	return plumbing.ZeroHash, s.refs[0], last
}

// deployment is one deployed revision of a source: the snapshot, the
// prompt workspace and every agent's skills, built before it is swapped
// in.
type deployment struct {
	commit string // commit hash, or worktree:<content id> for a working tree
	// fsys is what requests read: base with new users' seed files
	// served virtually (seedFS).
	fsys   fs.FS
	base   fs.FS
	ws     *prompt.Workspace
	agents map[string]*deployedAgent
	names  []string
	at     time.Time
	// logLevel is the level its deploy and index lines are logged at.
	logLevel slog.Level

	// prompts caches encoded prompt responses by agent, day and request:
	// assembly is deterministic, and a deployment never changes.
	// promptBytes is what the keys and answers in it hold.
	promptMu    sync.RWMutex
	prompts     map[string][]byte
	promptBytes int
}

// Bounds of a deployment's prompt cache, in bytes, so that no client can
// grow the daemon by sending distinct requests: an answer whose key and
// body together exceed maxCachedPromptBytes is not kept (a request with a
// large "extra" is not worth keeping), and a cache that would pass
// maxPromptCacheBytes is emptied first.
const (
	maxCachedPromptBytes = 256 << 10
	maxPromptCacheBytes  = 32 << 20
)

func (dep *deployment) cachedPrompt(key []byte) []byte {
	dep.promptMu.RLock()
	defer dep.promptMu.RUnlock()
	return dep.prompts[string(key)]
}

func (dep *deployment) cachePrompt(key string, b []byte) {
	n := len(key) + len(b)
	if n > maxCachedPromptBytes {
		return
	}
	dep.promptMu.Lock()
	defer dep.promptMu.Unlock()
	if old, ok := dep.prompts[key]; ok {
		dep.promptBytes -= len(key) + len(old)
	}
	if dep.promptBytes+n > maxPromptCacheBytes {
		clear(dep.prompts)
		dep.promptBytes = 0
	}
	dep.prompts[key] = b
	dep.promptBytes += n
}

type deployedAgent struct {
	agent  *prompt.Agent
	skills *skills.Set
}

// deploy builds the source's newest revision and swaps it in. It returns
// the previous deployment (nil when nothing changed or nothing was
// deployed before) and the new one.
func (d *Daemon) deploy(ctx context.Context, s *source) (*deployment, error) {
	return d.deployLogged(ctx, s, slog.LevelInfo)
}

// deployLogged is deploy, logging the deployment and its index run at
// level: an agent's own write (many a minute) logs at debug, so that info
// stays for what an operator acts on (pushes, fetches, errors).
func (d *Daemon) deployLogged(ctx context.Context, s *source, level slog.Level) (*deployment, error) {
	s.deployMu.Lock()
	defer s.deployMu.Unlock()
	start := time.Now()
	var fsys fs.FS
	var commit string
	switch s.kind {
	case kindDir:
		fsys = workspace.DirFS(s.dir)
		id, err := contentID(fsys)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", s.dir, err)
		}
		if cur := s.cur.Load(); cur != nil && cur.commit == id {
			return cur, nil // the same files: nothing to deploy or index
		}
		commit = id
	default:
		h, _, err := s.head()
		if err != nil {
			if errors.Is(err, plumbing.ErrReferenceNotFound) {
				return nil, nil // an empty repository: nothing to deploy yet
			}
			return nil, fmt.Errorf("resolve %s: %w", s.refs[0], err)
		}
		if cur := s.cur.Load(); cur != nil && cur.commit == h.String() {
			return cur, nil
		}
		snap, err := s.repo.SnapshotOf(h)
		if err != nil {
			return nil, err
		}
		fsys, commit = snap, h.String()
	}
	dep, err := d.build(ctx, s, fsys, commit)
	if err != nil {
		s.setError(err)
		return nil, err
	}
	dep.logLevel = level
	// An agent belongs to the first source that deployed it: another
	// source defining the same name is not deployed (it would take over
	// the agent's prompt and memory index), and says why in status.
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	for _, o := range d.sourceList() {
		if o == s {
			continue
		}
		if od := o.cur.Load(); od != nil {
			for _, name := range dep.names {
				if _, ok := od.agents[name]; ok {
					err := fmt.Errorf("agent %q is already defined by %s; rename it in %s (agent.yaml name:) or remove it there", name, o.id(), s.id())
					d.log.Error("not deployed: two sources define one agent", "agent", name, "deployed", o.id(), "refused", s.id())
					s.setError(err)
					return nil, err
				}
			}
		}
	}
	s.cur.Store(dep)
	s.setError(nil)
	d.notes.deployed(s, dep.commit)
	d.metrics.deployed(time.Since(start))
	d.indexer.enqueue(s, dep)
	for _, name := range dep.names {
		d.events.publish(api.Event{Type: "deploy", Agent: name, Source: s.id(), Commit: dep.commit,
			Message: fmt.Sprintf("deployed %s", short(dep.commit))})
	}
	d.log.Log(ctx, level, "deployed", "source", s.id(), "commit", short(dep.commit), "agents", strings.Join(dep.names, ","), "took", time.Since(start))
	return dep, nil
}

func (d *Daemon) build(ctx context.Context, s *source, base fs.FS, commit string) (*deployment, error) {
	view := &seedFS{base: base}
	ws, err := prompt.Open(view, prompt.Options{RootName: s.rootName, Cache: d.tokens})
	if err != nil {
		return nil, fmt.Errorf("open workspace of %s at %s: %w", s.id(), short(commit), err)
	}
	view.agents = ws.Agents()
	fsys := fs.FS(view)
	dep := &deployment{commit: commit, fsys: fsys, base: base, ws: ws, agents: map[string]*deployedAgent{}, at: d.opts.Now(), prompts: map[string][]byte{}}
	for _, a := range ws.Agents() {
		srcs := skills.WorkspaceSources(fsys, a.Dir)
		if s.kind == kindDir {
			for i := range srcs {
				if srcs[i].Tier != skills.TierBuiltin {
					srcs[i].Dir = joinDir(s.dir, srcs[i].Prefix)
				}
			}
		}
		srcs = append(srcs, d.sharedSkills().Sources()...)
		set := skills.Load(s.seq.Add(1), srcs, nil)
		dep.agents[a.Name] = &deployedAgent{agent: a, skills: set}
		dep.names = append(dep.names, a.Name)
	}
	sort.Strings(dep.names)
	return dep, nil
}

// sharedSkills names the skill tiers every agent shares besides the
// built-ins (which WorkspaceSources already adds): ~/.agents/skills and the
// managed directory.
func (d *Daemon) sharedSkills() skills.Options {
	return skills.Options{HomeDir: d.opts.HomeDir, ManagedDir: d.opts.SkillsDir, NoBuiltin: true}
}

// redeploySkills rebuilds every source's current deployment when a shared
// skill tier changes on disk, so the next prompt lists the new skills.
// The commit stays the same; memory is not re-indexed.
func (d *Daemon) redeploySkills(ctx context.Context, updates <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-updates:
		}
		for _, s := range d.sourceList() {
			if err := d.rebuild(ctx, s); err != nil {
				d.log.Warn("reload shared skills failed", "source", s.id(), "err", err)
			}
		}
	}
}

// rebuild re-reads the skills of s's current deployment.
func (d *Daemon) rebuild(ctx context.Context, s *source) error {
	s.deployMu.Lock()
	defer s.deployMu.Unlock()
	cur := s.cur.Load()
	if cur == nil {
		return nil
	}
	dep, err := d.build(ctx, s, cur.base, cur.commit)
	if err != nil {
		return err
	}
	if sameSkills(cur, dep) {
		return nil // a write of the same content, or the watcher's first look
	}
	s.cur.Store(dep)
	d.log.Info("reloaded shared skills", "source", s.id(), "commit", short(dep.commit))
	return nil
}

// sameSkills reports whether every agent of a and b has the same skills,
// problems and shadows: then b would serve exactly what a serves, and a
// (with its cached prompts) stays.
func sameSkills(a, b *deployment) bool {
	if len(a.agents) != len(b.agents) {
		return false
	}
	for name, aa := range a.agents {
		ba, ok := b.agents[name]
		if !ok {
			return false
		}
		x, y := aa.skills, ba.skills
		if len(x.Skills()) != len(y.Skills()) || !reflect.DeepEqual(x.Problems(), y.Problems()) || !reflect.DeepEqual(x.Shadows(), y.Shadows()) {
			return false
		}
		for i, sk := range x.Skills() {
			if !reflect.DeepEqual(*sk, *y.Skills()[i]) {
				return false
			}
		}
	}
	return true
}

func joinDir(root, rel string) string {
	if rel == "." || rel == "" {
		return root
	}
	return root + string(os.PathSeparator) + strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

func short(commit string) string {
	if len(commit) == 40 {
		return commit[:12]
	}
	return commit
}

// afterPush deploys a hosted repository after an accepted push and writes
// the deploy report on the client's remote: lines.
func (d *Daemon) afterPush(ctx context.Context, e gitsync.Event, remote io.Writer) {
	s, err := d.repoSource(e.Name)
	if err != nil {
		fmt.Fprintf(remote, "quire: cannot deploy %s: %v\n", e.Name, err)
		return
	}
	moved := false
	for _, r := range e.Refs {
		if r.Name.String() == s.refs[0] {
			moved = true
		}
	}
	if !moved {
		for _, r := range e.Refs {
			switch {
			case r.Name == gitsync.MainRef:
				fmt.Fprintf(remote, "quire: live already holds this main; nothing new to deploy\n")
			case r.Name.IsBranch() && !strings.HasPrefix(r.Name.String(), "refs/heads/proposals/"):
				fmt.Fprintf(remote, "quire: %s is stored but not deployed: push to main (merged into live, which is deployed)\n", r.Name.Short())
			}
		}
		return
	}
	prev := s.cur.Load()
	dep, err := d.deploy(ctx, s)
	if err != nil {
		fmt.Fprintf(remote, "quire: deploy failed: %v\n", err)
		return
	}
	if dep == nil {
		return
	}
	writeDeployReport(remote, prev, dep, d.opts.Now())
	wctx, cancel := context.WithTimeout(ctx, d.opts.IndexWait)
	defer cancel()
	done := s.waitIndexed(wctx, dep)
	for _, name := range dep.names {
		if !done {
			fmt.Fprintf(remote, "%s: memory: indexing continues\n", name)
			continue
		}
		s.mu.Lock()
		st, errText := s.stats[name], s.indexErr[name]
		s.mu.Unlock()
		if errText != "" {
			fmt.Fprintf(remote, "%s: memory: indexing failed: %s (it will be retried)\n", name, errText)
			continue
		}
		fmt.Fprintf(remote, "%s: memory: %s chunks re-indexed (%s documents changed, %s removed, %s unchanged)\n",
			name, prompt.GroupThousands(st.Chunks), prompt.GroupThousands(st.Changed), prompt.GroupThousands(st.Removed), prompt.GroupThousands(st.Unchanged))
	}
}

// waitIndexed waits until every agent of dep is indexed at dep's commit
// (or a later one replaced it), reporting whether that happened before
// ctx ended.
func (s *source) waitIndexed(ctx context.Context, dep *deployment) bool {
	for {
		s.mu.Lock()
		done := true
		for _, name := range dep.names {
			if s.indexed[name] != dep.commit {
				done = false
			}
		}
		ch := s.notify
		s.mu.Unlock()
		if done || s.cur.Load() != dep {
			return done
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// writeDeployReport writes one block of remote: lines per agent; now
// tells which daily logs the agent's retention will prune.
func writeDeployReport(w io.Writer, prev, dep *deployment, now time.Time) {
	for _, name := range dep.names {
		a := dep.agents[name]
		res, err := dep.ws.Assemble(prompt.Request{Agent: name, Session: prompt.SessionMain, Channel: prompt.ChannelDM,
			Skills: a.skills.PromptSkills(skills.Request{Agent: name, Allow: a.agent.Config.Skills}), CountPromptTokens: true})
		if err != nil {
			fmt.Fprintf(w, "%s: cannot assemble the prompt: %v\n", name, err)
			continue
		}
		r := res.Report
		pct := 0
		if r.Budget.TotalChars > 0 {
			pct = r.InjectedChars * 100 / r.Budget.TotalChars
		}
		n := prompt.GroupThousands
		fmt.Fprintf(w, "%s: deployed %s: prompt %s chars / %s tokens; context files %s of %s chars (%d%% of the total budget)\n",
			name, short(dep.commit), n(r.PromptChars), n(r.PromptTokens), n(r.InjectedChars), n(r.Budget.TotalChars), pct)
		for _, f := range r.Files {
			switch f.Status {
			case prompt.StatusTruncated, prompt.StatusClamped:
				fmt.Fprintf(w, "%s: %s %s: kept %s + %s of %s chars\n", name, f.Status, f.Name, n(f.HeadChars), n(f.TailChars), n(f.OriginalChars))
			case prompt.StatusDropped:
				fmt.Fprintf(w, "%s: dropped %s (%s chars): the total budget was used up\n", name, f.Name, n(f.OriginalChars))
			}
		}
		if cfg := a.agent.Config; cfg.DailyLogRetentionDays > 0 {
			loc := cfg.Location
			if loc == nil {
				loc = time.UTC
			}
			if old := memory.ExpiredLogs(dep.ws.FS(), a.agent.Dir, cfg.DailyLogRetentionDays, now.In(loc)); len(old) > 0 {
				fmt.Fprintf(w, "%s: daily logs: %s older than %d days (daily_log_retention_days) will be pruned within the hour: %s\n",
					name, n(len(old)), cfg.DailyLogRetentionDays, listSome(old, 5))
			}
		}
		var before *skills.Set
		if prev != nil {
			if pa, ok := prev.agents[name]; ok {
				before = pa.skills
			}
		}
		added, changed, removed := skillChanges(before, a.skills)
		var parts []string
		for _, c := range []struct {
			what  string
			slugs []string
		}{{"added", added}, {"changed", changed}, {"removed", removed}} {
			if len(c.slugs) > 0 {
				parts = append(parts, c.what+" "+strings.Join(c.slugs, ", "))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s: skills %s\n", name, strings.Join(parts, "; "))
		}
	}
}

// skillChanges compares the skills of two sets by slug.
func skillChanges(before, after *skills.Set) (added, changed, removed []string) {
	old := map[string]*skills.Skill{}
	if before != nil {
		for _, sk := range before.Skills() {
			old[sk.Slug] = sk
		}
	}
	for _, sk := range after.Skills() {
		o, ok := old[sk.Slug]
		switch {
		case !ok:
			added = append(added, sk.Slug)
		case o.Description != sk.Description || o.Body != sk.Body || o.Path != sk.Path:
			changed = append(changed, sk.Slug)
		}
		delete(old, sk.Slug)
	}
	for slug := range old {
		removed = append(removed, slug)
	}
	sort.Strings(removed)
	return added, changed, removed
}

// listSome joins the first max items and says how many more there are.
func listSome(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// contentID names a working tree's content: "worktree:" and a hash of
// every file's path and bytes (.git skipped). The same files give the
// same id in any process, so a restart never takes stale memory for
// indexed, and a change always gives a new id.
func contentID(fsys fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			fmt.Fprintf(h, "%s\x00%s\x00", p, e.Type())
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return "worktree:" + hex.EncodeToString(h.Sum(nil))[:20], nil
}
