package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

// deployer turns a source's commits into deployments: it builds the
// newest revision of a source (after a push, a fetch, a saved file or a
// write) and swaps it in atomically, rebuilds the current deployments
// when a shared skill tier changes, writes the deploy report of a push,
// and merges a followed upstream's main into its live. A deployment it
// swaps in is announced (events, liveNotes), counted and queued for the
// indexer.
type deployer struct {
	sources *sourceSet
	// tokens caches token counts across deployments (prompt.Tokenizer).
	tokens *prompt.Tokenizer
	// shared names the skill tiers every agent shares besides the
	// built-ins (which agent.Skills adds): ~/.agents/skills
	// and the managed directory.
	shared    skills.Options
	indexer   *indexer
	notes     *liveNotes
	events    *broker
	metrics   *metrics
	log       *slog.Logger
	now       func() time.Time
	indexWait time.Duration // how long a push's report waits for the index

	// claimMu makes "no other source defines this agent" and the swap of
	// a deployment one step.
	claimMu sync.Mutex
}

// deployState is a source's deployed revision. The deployer owns it:
// only the deployer swaps a deployment in (one deploy at a time) and
// records why the last deploy failed; every other part reads current.
type deployState struct {
	// cur is the deployment requests read: swapped atomically, so a
	// request sees the old or the new revision, never a mix.
	cur atomic.Pointer[deployment]
	mu  sync.Mutex // one deploy at a time
	// seq numbers the skill sets the deploys load
	// (agent.SkillOptions.Version).
	seq atomic.Uint64

	errMu   sync.Mutex
	lastErr string
}

// current is the deployed revision (nil before the first deploy).
func (ds *deployState) current() *deployment { return ds.cur.Load() }

// lastError is why the last deploy failed ("" when it worked).
func (ds *deployState) lastError() string {
	ds.errMu.Lock()
	defer ds.errMu.Unlock()
	return ds.lastErr
}

func (ds *deployState) setError(err error) {
	ds.errMu.Lock()
	defer ds.errMu.Unlock()
	if err == nil {
		ds.lastErr = ""
	} else {
		ds.lastErr = err.Error()
	}
}

// deploy builds the source's newest revision and swaps it in. It returns
// the previous deployment (nil when nothing changed or nothing was
// deployed before) and the new one.
func (dp *deployer) deploy(ctx context.Context, s *source) (*deployment, error) {
	return dp.deployLogged(ctx, s, slog.LevelInfo)
}

// deployLogged is deployOnce, then, when the shared skills repository
// deployed a new revision, the rebuild of every other source's skills.
func (dp *deployer) deployLogged(ctx context.Context, s *source, level slog.Level) (*deployment, error) {
	prev := s.deploys.current()
	dep, err := dp.deployOnce(ctx, s, level)
	if err == nil && dep != nil && dep != prev && isSharedSkills(s) {
		dp.rebuildOthers(ctx, s)
	}
	return dep, err
}

// deployOnce is deploy, logging the deployment and its index run at
// level: an agent's own write (many a minute) logs at debug, so that info
// stays for what an operator acts on (pushes, fetches, errors).
func (dp *deployer) deployOnce(ctx context.Context, s *source, level slog.Level) (*deployment, error) {
	s.deploys.mu.Lock()
	defer s.deploys.mu.Unlock()
	start := time.Now()
	fsys, commit, same, err := dp.newest(s)
	if err != nil || fsys == nil {
		return same, err
	}
	dep, err := dp.build(ctx, s, fsys, commit)
	if err != nil {
		s.deploys.setError(err)
		return nil, err
	}
	dep.logLevel = level
	dep.damaged = s.repo != nil && s.repo.Damage() != nil
	dp.claimMu.Lock()
	defer dp.claimMu.Unlock()
	if err := dp.claimed(s, dep); err != nil {
		s.deploys.setError(err)
		return nil, err
	}
	s.deploys.cur.Store(dep)
	s.deploys.setError(nil)
	dp.notes.deployed(s, dep.commit)
	dp.metrics.deployed(time.Since(start))
	dp.indexer.enqueue(s, dep)
	for _, name := range dep.names {
		dp.events.publish(api.Event{Type: "deploy", Agent: name, Source: s.id(), Commit: dep.commit,
			Message: fmt.Sprintf("deployed %s", short(dep.commit))})
	}
	dp.log.Log(ctx, level, "deployed", "source", s.id(), "commit", short(dep.commit), "agents", strings.Join(dep.names, ","), "took", time.Since(start))
	return dep, nil
}

// newest reads s's newest revision: its tree and commit, or, when
// there is nothing new to deploy (fsys nil), what deploy returns then:
// the current deployment when it is that revision, nil for an empty
// repository.
func (dp *deployer) newest(s *source) (fsys fs.FS, commit string, same *deployment, err error) {
	if s.kind == kindDir {
		dir := workspace.DirFS(s.dir)
		scan, err := scanTree(dir, time.Now())
		if err != nil {
			return nil, "", nil, fmt.Errorf("read %s: %w", s.dir, err)
		}
		if cur := s.deploys.current(); cur != nil && cur.commit == scan.id {
			return nil, "", cur, nil // the same files: nothing to deploy or index
		}
		// The build reads the listings the id names (see listedDir).
		return newListedDir(dir, scan.dirs), scan.id, nil, nil
	}
	h, _, err := s.head()
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return nil, "", nil, nil // an empty repository: nothing to deploy yet
		}
		return nil, "", nil, fmt.Errorf("resolve %s: %w", s.refs[0], err)
	}
	if cur := s.deploys.current(); cur != nil && cur.commit == h.String() && (!cur.damaged || s.repo.Damage() != nil) {
		return nil, "", cur, nil
	}
	snap, err := s.repo.SnapshotOf(h)
	if err != nil {
		return nil, "", nil, err
	}
	return snap, h.String(), nil, nil
}

// claimed refuses dep when another source deploys one of its agents
// already: an agent belongs to the first source that deployed it, as
// another would take over the agent's prompt and memory index. Callers
// hold claimMu until dep is swapped in.
func (dp *deployer) claimed(s *source, dep *deployment) error {
	for _, o := range dp.sources.all() {
		if o == s {
			continue
		}
		od := o.deploys.current()
		if od == nil {
			continue
		}
		for _, name := range dep.names {
			if _, ok := od.agents[name]; ok {
				dp.log.Error("not deployed: two sources define one agent", "agent", name, "deployed", o.id(), "refused", s.id())
				return &duplicateAgentError{agent: name, owner: o.id(), other: s.id()}
			}
		}
	}
	return nil
}

func (dp *deployer) build(ctx context.Context, s *source, base fs.FS, commit string) (*deployment, error) {
	if l, ok := base.(*listedDir); ok {
		defer l.forget() // what the deployment reads later is on disk
	}
	if isSharedSkills(s) {
		return dp.buildSharedSkills(s, base, commit), nil
	}
	view := &seedFS{base: base}
	ws, err := prompt.Open(view, prompt.Options{RootName: s.rootName, Tokenizer: dp.tokens, Seeds: templates.Seeds})
	if err != nil {
		return nil, fmt.Errorf("open workspace of %s at %s: %w", s.id(), short(commit), err)
	}
	view.agents = ws.Agents()
	fsys := fs.FS(view)
	dep := &deployment{commit: commit, fsys: fsys, base: base, ws: ws, agents: map[string]*deployedAgent{}, at: dp.now()}
	agents, shared := ws.Agents(), dp.sharedSources()
	first := s.deploys.seq.Add(uint64(len(agents))) - uint64(len(agents)) + 1
	sets := make([]*skills.Set, len(agents))
	forEach(len(agents), func(i int) {
		opts := agent.SkillOptions{Shared: shared, Version: first + uint64(i)}
		if s.kind == kindDir {
			opts.Dir = s.dir
		}
		sets[i] = agent.Skills(fsys, agents[i], opts)
	})
	for i, a := range agents {
		dep.agents[a.Name] = &deployedAgent{agent: a, skills: sets[i], repo: s.rootName}
		dep.names = append(dep.names, a.Name)
	}
	sort.Strings(dep.names)
	return dep, nil
}

// forEach calls fn(i) for every i below n, on up to GOMAXPROCS
// goroutines when n is large enough to be worth them (a fleet's agents),
// and returns once every call has.
func forEach(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/64)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				fn(int(i))
			}
		})
	}
	wg.Wait()
}

// redeploySkills rebuilds every source's current deployment when a shared
// skill tier changes on disk, so the next prompt lists the new skills.
// The commit stays the same; memory is not re-indexed.
func (dp *deployer) redeploySkills(ctx context.Context, updates <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-updates:
		}
		for _, s := range dp.sources.all() {
			if err := dp.rebuild(ctx, s); err != nil {
				dp.log.Warn("reload shared skills failed", "source", s.id(), "err", err)
			}
		}
	}
}

// rebuild re-reads the skills of s's current deployment.
func (dp *deployer) rebuild(ctx context.Context, s *source) error {
	s.deploys.mu.Lock()
	defer s.deploys.mu.Unlock()
	cur := s.deploys.current()
	if cur == nil {
		return nil
	}
	dep, err := dp.build(ctx, s, cur.base, cur.commit)
	if err != nil {
		return err
	}
	if sameSkills(cur, dep) {
		return nil // a write of the same content, or the watcher's first look
	}
	s.deploys.cur.Store(dep)
	dp.log.Info("reloaded shared skills", "source", s.id(), "commit", short(dep.commit))
	return nil
}

// afterPush deploys a hosted repository after an accepted push and writes
// the deploy report on the client's remote: lines.
func (dp *deployer) afterPush(ctx context.Context, e gitsync.Event, remote io.Writer) {
	s, err := dp.sources.hosted(e.Name)
	if err != nil {
		fmt.Fprintf(remote, "quire: cannot deploy %s: %v\n", e.Name, err)
		return
	}
	if s.repo.Damage() != nil {
		// The push may have replaced what was damaged (a broken ref).
		_ = dp.sources.host.Verify(ctx, e.Name)
	}
	if !slices.ContainsFunc(e.Refs, func(r gitsync.RefUpdate) bool { return r.Name.String() == s.refs[0] }) {
		reportNotDeployed(remote, e.Refs)
		return
	}
	pruneMerged(s, dp.log)
	prev := s.deploys.current()
	dep, err := dp.deploy(ctx, s)
	if err != nil {
		fmt.Fprintf(remote, "quire: deploy failed: %v\n", err)
		return
	}
	if dep == nil {
		return
	}
	if fromDaemon(s, e.Refs) {
		// Another daemon's write (a follower of this host): it waits for
		// this answer to acknowledge its client and reads no report.
		fmt.Fprintf(remote, "quire: deployed %s\n", short(dep.commit))
		return
	}
	if dep.sharedSkills != nil {
		writeSharedSkillsReport(remote, dep)
		return
	}
	writeDeployReport(remote, prev, dep, dp.now())
	dp.writeIndexReport(ctx, remote, s, dep)
}

// reportNotDeployed tells the pusher of refs that moved none of what is
// deployed why nothing was.
func reportNotDeployed(remote io.Writer, refs []gitsync.RefUpdate) {
	for _, r := range refs {
		switch {
		case r.Name == gitsync.MainRef:
			fmt.Fprintf(remote, "quire: live already holds this main; nothing new to deploy\n")
		case r.Name.IsBranch() && !strings.HasPrefix(r.Name.String(), "refs/heads/proposals/"):
			fmt.Fprintf(remote, "quire: %s is stored but not deployed: push to main (merged into live, which is deployed)\n", r.Name.Short())
		}
	}
}

// writeIndexReport waits up to dp.indexWait for dep's memory to be
// indexed and tells the pusher how that went for each agent.
func (dp *deployer) writeIndexReport(ctx context.Context, remote io.Writer, s *source, dep *deployment) {
	wctx, cancel := context.WithTimeout(ctx, dp.indexWait)
	defer cancel()
	done := waitIndexed(wctx, s, dep)
	for _, name := range dep.names {
		if !done {
			fmt.Fprintf(remote, "%s: memory: indexing continues\n", name)
			continue
		}
		ai := s.index.agent(name)
		st := ai.stats
		if ai.err != "" {
			fmt.Fprintf(remote, "%s: memory: indexing failed: %s (it will be retried)\n", name, ai.err)
			continue
		}
		fmt.Fprintf(remote, "%s: memory: %s chunks re-indexed (%s documents changed, %s removed, %s unchanged)\n",
			name, prompt.GroupThousands(st.Chunks), prompt.GroupThousands(st.Changed), prompt.GroupThousands(st.Removed), prompt.GroupThousands(st.Unchanged))
	}
}

// duplicateAgentError is a source that defines an agent another source
// serves already: it is not deployed (a push that would do it is
// refused; at start the daemon does not start).
type duplicateAgentError struct {
	agent, owner, other string
}

func (e *duplicateAgentError) Error() string {
	return fmt.Sprintf("agent %q is already defined by %s; rename it in %s (agent.yaml name:) or remove it there", e.agent, e.owner, e.other)
}

// fromDaemon reports whether a push moved only live, to a commit a
// daemon made (an agent's write, or the host's merge of one).
func fromDaemon(s *source, refs []gitsync.RefUpdate) bool {
	if len(refs) != 1 || refs[0].Name != gitsync.LiveRef || refs[0].New.IsZero() {
		return false
	}
	return s.repo.ByQuire(refs[0].New)
}
