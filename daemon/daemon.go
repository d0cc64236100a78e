package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/mcp"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/memory/pgstore"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/workspace"
	"github.com/quirehq/quire/skills"
)

// Options configure a Daemon. At least one source (Dir, ReposDir or
// Upstream) is required.
type Options struct {
	// SkillsDir is the managed skills directory (tier 4 of every agent's
	// skills); HomeDir, when set, adds HomeDir/.agents/skills (tier 3).
	// Both are watched: a change re-deploys every agent's skills.
	SkillsDir string
	HomeDir   string
	// Dir is a working tree served in dev mode: watched for changes,
	// writes go to its files (not committed).
	Dir string
	// ReposDir holds the bare repositories the daemon hosts and accepts
	// pushes for (<name>.git), served over smart HTTP on GitListen.
	ReposDir string
	// GitListen is the address of the git endpoint (default
	// 127.0.0.1:7480 when ReposDir is set).
	GitListen string
	// GitTokens, when not empty, are the credentials the git endpoint
	// requires (HTTP basic auth, the token as the password). Empty leaves
	// the endpoint open: only tests do that; `quire serve` always passes
	// at least the token of its state directory (LoadGitToken).
	GitTokens []GitToken
	// AllowedHosts are host names (besides the listeners' own addresses
	// and localhost) that the git endpoint and the TCP API answer to.
	AllowedHosts []string
	// AllowCreate lets a push to a new name create a hosted repository
	// (off: only existing repositories accept pushes).
	AllowCreate bool
	// AllowNonFastForward lets a push move a hosted repository's main to
	// a commit that does not descend from it (live, with every agent
	// write, never loses history either way).
	AllowNonFastForward bool
	// Upstream is a remote to follow, fetched every Poll (default 30 s).
	Upstream string
	Poll     time.Duration
	// WebhookSecret, when set, turns on POST /v1/hooks/git: a push
	// webhook (GitHub, Gitea) signed with it makes the followed upstream
	// it names fetch at once.
	WebhookSecret []byte
	// Socket is the unix socket of the local API (default
	// $XDG_RUNTIME_DIR/quire/quire.sock).
	Socket string
	// APIListen, when set, serves the local API on TCP too; Tokens are
	// then required there.
	APIListen string
	Tokens    api.Tokens
	// DatabaseURL selects the PostgreSQL store; "" means the embedded one.
	DatabaseURL string
	// DatabaseWait starts the daemon even when the database does not
	// answer: prompts are served, and the store connects in the
	// background. Without it, an unreachable database fails New.
	DatabaseWait bool
	// DatabaseSchema holds Quire's tables in that database; "" means
	// pgstore's default ("quire").
	DatabaseSchema string
	// Store, when set, is used instead of building one (tests).
	Store memory.Store
	// Embedder embeds memory chunks; nil means memory.Builtin{}.
	Embedder memory.Embedder
	// CacheDir holds the embedding cache and upstream mirrors; "" means
	// a directory under os.UserCacheDir.
	CacheDir string
	// Version is reported by GET /v1/status.
	Version string
	// Logger receives the daemon's logs; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PruneInterval is how often daily logs past their retention are
	// pruned (default 1 h; the first run is after a minute or PruneInterval,
	// whichever is shorter).
	PruneInterval time.Duration
	// IndexWait is how long the deploy report of a push waits for the
	// index before saying "indexing continues" (default 1 s).
	IndexWait time.Duration
	// IndexTimeout bounds one agent's index run (default 2 min): a store
	// that stops answering is reported, and the run retried.
	IndexTimeout time.Duration
}

// Daemon is `quire serve`: sources of truth deployed atomically, the
// memory index kept in step, and the local API and git endpoint.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	store   memory.Store
	emb     memory.Embedder
	tokens  *prompt.Cache
	host    *gitsync.Host
	events  *broker
	metrics *metrics
	indexer *indexer
	notes   *liveNotes
	started time.Time

	mu      sync.RWMutex
	sources []*source
	// claimMu makes "no other source defines this agent" and the swap of
	// a deployment one step.
	claimMu sync.Mutex

	flushMu sync.Mutex
	flushed map[string]int // agent/user/session → last flushed cycle + 1

	// ready is closed once every listener listens; gitAddr and apiAddr
	// are their addresses.
	ready            chan struct{}
	gitAddr, apiAddr string
}

// Ready is closed once Run listens on every address.
func (d *Daemon) Ready() <-chan struct{} { return d.ready }

// GitAddr is the address the git endpoint listens on, once Ready.
func (d *Daemon) GitAddr() string { return d.gitAddr }

// APIAddr is the TCP address of the local API, once Ready ("" without
// --api-listen).
func (d *Daemon) APIAddr() string { return d.apiAddr }

// New builds a daemon from opts: it opens the store, the hosted
// repositories and the upstream mirror, and deploys what they hold.
func New(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Dir == "" && opts.ReposDir == "" && opts.Upstream == "" {
		return nil, errors.New("no source of truth: give --dir, --repos or --upstream")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Poll <= 0 {
		opts.Poll = 30 * time.Second
	}
	if opts.PruneInterval <= 0 {
		opts.PruneInterval = time.Hour
	}
	if opts.IndexWait <= 0 {
		opts.IndexWait = time.Second
	}
	if opts.IndexTimeout <= 0 {
		opts.IndexTimeout = 2 * time.Minute
	}
	if opts.Socket == "" {
		opts.Socket = api.DefaultSocket(os.Getenv)
	}
	if opts.ReposDir != "" && opts.GitListen == "" {
		opts.GitListen = "127.0.0.1:7480"
	}
	if opts.CacheDir == "" {
		opts.CacheDir = workspace.CacheDir(os.Getenv)
		if opts.CacheDir == "" {
			opts.CacheDir = filepath.Join(workspace.PrivateTempDir(), "cache")
		}
	}
	if opts.Embedder == nil {
		opts.Embedder = memory.Builtin{}
	}
	d := &Daemon{
		opts:    opts,
		log:     opts.Logger,
		emb:     opts.Embedder,
		tokens:  prompt.NewCache(),
		events:  newBroker(),
		metrics: newMetrics(),
		notes:   newLiveNotes(),
		started: opts.Now(),
		flushed: map[string]int{},
		ready:   make(chan struct{}),
	}
	d.indexer = newIndexer(d)
	if err := d.openStore(ctx); err != nil {
		return nil, err
	}
	if err := d.openSources(ctx); err != nil {
		d.store.Close()
		return nil, err
	}
	return d, nil
}

func (d *Daemon) openStore(ctx context.Context) error {
	switch {
	case d.opts.Store != nil:
		d.store = d.opts.Store
	case d.opts.DatabaseURL != "":
		open := func(ctx context.Context) (memory.Store, error) {
			st, err := pgstore.Open(ctx, pgstore.Options{URL: d.opts.DatabaseURL, Schema: d.opts.DatabaseSchema, Embedder: d.emb, Logger: d.log, Older: d.olderCommit})
			if err != nil {
				return nil, fmt.Errorf("open the PostgreSQL store: %w", err)
			}
			return st, nil
		}
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		st, err := open(octx)
		if err == nil {
			d.store = st
			break
		}
		if !d.opts.DatabaseWait {
			return err
		}
		// Serve prompts now; connect when PostgreSQL answers.
		d.log.Warn("PostgreSQL is unreachable; serving prompts, memory search waits for it", "err", err)
		d.store = &lazyStore{open: open, log: d.log, lastErr: err}
	default:
		if err := os.MkdirAll(d.opts.CacheDir, 0o700); err != nil {
			return fmt.Errorf("create cache directory: %w", err)
		}
		st, err := memstore.New(memstore.Options{Embedder: d.emb, Logger: d.log,
			CacheFile: filepath.Join(d.opts.CacheDir, "embeddings-"+safeName(d.emb.Model())+".bin")})
		if err != nil {
			return fmt.Errorf("open the embedded store: %w", err)
		}
		d.store = st
	}
	return nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

func (d *Daemon) openSources(ctx context.Context) error {
	if d.opts.Dir != "" {
		abs, err := filepath.Abs(d.opts.Dir)
		if err != nil {
			return fmt.Errorf("--dir %s: %w", d.opts.Dir, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("--dir %s: not a directory", d.opts.Dir)
		}
		d.addSource(&source{kind: kindDir, name: abs, rootName: filepath.Base(abs), dir: abs})
	}
	if d.opts.ReposDir != "" {
		host, err := gitsync.NewHost(d.opts.ReposDir, gitsync.HostOptions{
			Validator:    gitsync.WorkspaceChecks(gitsync.CheckOptions{Cache: d.tokens}),
			AfterPush:    d.afterPush,
			Authenticate: d.gitUser(),
			AllowCreate:  d.opts.AllowCreate,
			Logger:       d.log,
			// main is people's, live the daemon's (see gitsync.MainRef).
			Live:                true,
			AllowNonFastForward: d.opts.AllowNonFastForward,
		})
		if err != nil {
			return fmt.Errorf("--repos %s: %w", d.opts.ReposDir, err)
		}
		d.host = host
		entries, err := os.ReadDir(d.opts.ReposDir)
		if err != nil {
			return fmt.Errorf("--repos %s: %w", d.opts.ReposDir, err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".git")
			if !ok || !e.IsDir() || !gitsync.ValidRepoName(name) {
				continue
			}
			if _, err := d.repoSource(name); err != nil {
				d.log.Warn("skipping hosted repository", "repo", name, "err", err)
			}
		}
	}
	if d.opts.Upstream != "" {
		mirrors, err := gitsync.NewHost(filepath.Join(d.opts.CacheDir, "upstream"), gitsync.HostOptions{})
		if err != nil {
			return fmt.Errorf("upstream mirror: %w", err)
		}
		name := "u-" + memory.Hash([]byte(d.opts.Upstream))[:16]
		repo, err := mirrors.Create(name)
		if err != nil {
			return fmt.Errorf("upstream mirror: %w", err)
		}
		root := strings.TrimSuffix(pathBase(d.opts.Upstream), ".git")
		s := d.addSource(&source{kind: kindUpstream, name: d.opts.Upstream, rootName: root, repo: repo,
			refs: []string{upstreamLive.String(), upstreamMain.String(), "refs/remotes/upstream/master"}})
		// A fetch's follow-up (merge main into live, deploy) runs in Run's
		// loop, not in the fetch: a writer that fetches holds s.writeMu.
		s.fetched = make(chan struct{}, 1)
		s.follower = gitsync.NewFollower(repo, d.opts.Upstream, func(gitsync.Event) {
			select {
			case s.fetched <- struct{}{}:
			default:
			}
		})
		s.follower.Interval = d.opts.Poll
		s.follower.Logger = d.log
		s.follower.OnFetch = s.setFetchError
		// The first fetch before the first deploy, so that a restart
		// serves what the upstream holds (a failure is in status).
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if _, err := s.follower.Fetch(fctx); err != nil {
			d.log.Warn("first fetch of the upstream failed; serving the mirror", "url", d.opts.Upstream, "err", err)
		}
		cancel()
	}
	d.mu.RLock()
	srcs := append([]*source(nil), d.sources...)
	d.mu.RUnlock()
	for _, s := range srcs {
		if _, err := d.deploy(ctx, s); err != nil {
			d.log.Error("initial deploy failed", "source", s.id(), "err", err)
			s.setError(err)
		}
	}
	return nil
}

func pathBase(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		return u[i+1:]
	}
	return u
}

// repoSource returns the source of the hosted repository name, adding it
// when it is new.
func (d *Daemon) repoSource(name string) (*source, error) {
	d.mu.RLock()
	for _, s := range d.sources {
		if s.kind == kindRepo && s.name == name {
			d.mu.RUnlock()
			return s, nil
		}
	}
	d.mu.RUnlock()
	repo, err := d.host.Repository(name)
	if err != nil {
		return nil, err
	}
	if err := repo.Check(); err != nil {
		// A damaged ref (left by a crash of an older version): deploying
		// it fails and /v1/status shows the error; a push can replace it.
		d.log.Error("hosted repository has broken refs", "repo", name, "err", err)
	}
	// The upgrade of a repository from before live: live starts at
	// main, nothing is rewritten.
	if created, err := repo.EnsureBranch(gitsync.LiveRef, gitsync.MainRef); err != nil {
		d.log.Error("cannot create live", "repo", name, "err", err)
	} else if created {
		d.log.Info("created live at main: agents' writes go to live from now on", "repo", name)
	}
	// main may have moved while the daemon was down (a push by file
	// path): live catches up.
	if m, err := repo.MergeMain(context.Background()); err != nil {
		d.log.Error("cannot merge main into live", "repo", name, "err", err)
	} else if !m.IsZero() {
		d.log.Info("merged main into live", "repo", name, "live", m.String()[:12])
	}
	return d.addSource(&source{kind: kindRepo, name: name, rootName: name, repo: repo, refs: []string{gitsync.LiveRef.String()}}), nil
}

func (d *Daemon) addSource(s *source) *source {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range d.sources {
		if o.kind == s.kind && o.name == s.name {
			return o
		}
	}
	s.init()
	d.sources = append(d.sources, s)
	return s
}

func (d *Daemon) sourceList() []*source {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]*source(nil), d.sources...)
}

// Socket is the path of the local API's unix socket.
func (d *Daemon) Socket() string { return d.opts.Socket }

// Handler is the local API handler, and MCP's streamable HTTP transport
// at /mcp, with the given token scopes (nil for the unix socket).
func (d *Daemon) Handler(tokens api.Tokens) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+HookPath, d.gitHook) // HMAC, not a bearer token
	mux.Handle("/", api.Handler(d, api.Options{Tokens: tokens, Logger: d.log, Observe: d.metrics.observeRequest}))
	mux.Handle(mcp.Path, mcp.Handler(mcp.Local(d), mcp.HTTPOptions{Options: mcp.Options{Version: d.opts.Version, Logger: d.log, Observe: d.metrics.observeRequest}, Tokens: tokens}))
	return mux
}

// GitHandler is the git endpoint (nil without --repos), behind the
// credentials of Options.GitTokens.
func (d *Daemon) GitHandler() http.Handler {
	if d.host == nil {
		return nil
	}
	h := http.Handler(d.host)
	if len(d.opts.GitTokens) > 0 {
		h = newGitAccess(d.opts.GitTokens).handler(h)
	}
	return d.metrics.countPushes(h)
}

// gitUser lets the hosted repositories record the basic-auth user name of
// a push; GitHandler has checked the credential before.
func (d *Daemon) gitUser() func(user, token string) bool {
	if len(d.opts.GitTokens) == 0 {
		return nil
	}
	return func(string, string) bool { return true }
}

// Run serves until ctx is done, then shuts down gracefully: in-flight
// pushes, commits and API requests finish, the socket is closed and
// removed, the store is closed.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.store.Close()
	g, gctx := errgroup.WithContext(ctx)

	sock, err := listenUnix(d.opts.Socket, d.log)
	if err != nil {
		return err
	}
	servers := []*http.Server{}
	// Slow clients are cut off: headers within 10 s, an API request body
	// within 30 s (bodies are at most 4 MiB), idle connections after a
	// minute. A push's body has no such bound here: the git endpoint
	// bounds a push's duration itself.
	serve := func(name string, l net.Listener, h http.Handler) {
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
			MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelWarn)}
		if name != "git" {
			srv.ReadTimeout = 30 * time.Second
		}
		servers = append(servers, srv)
		d.log.Info("listening", "server", name, "addr", l.Addr().String())
		g.Go(func() error {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	serve("api (unix socket)", sock, d.Handler(nil))
	if d.opts.APIListen != "" {
		l, err := net.Listen("tcp", d.opts.APIListen)
		if err != nil {
			sock.Close()
			return fmt.Errorf("--api-listen %s: %w", d.opts.APIListen, err)
		}
		tokens := d.opts.Tokens
		if tokens == nil {
			tokens = api.Tokens{}
		}
		d.apiAddr = l.Addr().String()
		serve("api (tcp)", l, guardHTTP(d.Handler(tokens), l.Addr(), d.opts.AllowedHosts))
	}
	if d.host != nil {
		l, err := net.Listen("tcp", d.opts.GitListen)
		if err != nil {
			for _, s := range servers {
				s.Close()
			}
			return fmt.Errorf("--git-listen %s: %w", d.opts.GitListen, err)
		}
		d.gitAddr = l.Addr().String()
		serve("git", l, guardHTTP(d.GitHandler(), l.Addr(), d.opts.AllowedHosts))
	}
	close(d.ready)
	if l, ok := d.store.(*lazyStore); ok {
		g.Go(func() error {
			if err := l.connect(gctx); err != nil {
				return err
			}
			d.indexer.retryAll()
			return nil
		})
	}
	g.Go(func() error { return d.indexer.run(gctx) })
	g.Go(func() error { return d.runNotes(gctx) })
	for _, s := range d.sourceList() {
		switch s.kind {
		case kindUpstream:
			f := s.follower
			g.Go(func() error { return quiet(gctx, f.Run(gctx)) })
			g.Go(func() error {
				for {
					select {
					case <-gctx.Done():
						return nil
					case <-s.fetched:
						d.afterFetch(gctx, s)
					}
				}
			})
		case kindDir:
			w := &gitsync.Watcher{Root: s.dir, Logger: d.log, OnEvent: func(e gitsync.Event) {
				if _, err := d.deploy(gctx, s); err != nil {
					d.log.Warn("deploy after a file change failed", "source", s.id(), "err", err)
				}
			}}
			g.Go(func() error { return quiet(gctx, w.Run(gctx)) })
		}
	}
	g.Go(func() error { return d.pruneLoop(gctx) })
	if d.opts.SkillsDir != "" || d.opts.HomeDir != "" {
		w := skills.NewWatcher(d.sharedSkills(), d.log)
		g.Go(func() error { return quiet(gctx, w.Run(gctx)) })
		g.Go(func() error { return d.redeploySkills(gctx, w.Updates()) })
	}
	if d.host != nil {
		g.Go(func() error { return quiet(gctx, d.host.Maintain(gctx, 10*time.Minute, 2000)) })
	}
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		d.events.close()
		for _, s := range servers {
			if err := s.Shutdown(sctx); err != nil {
				d.log.Warn("shutdown", "err", err)
			}
		}
		os.Remove(d.opts.Socket)
		return nil
	})
	err = g.Wait()
	d.log.Info("stopped")
	return err
}

// quiet drops the error of a part that stopped because ctx ended.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// agentRef is an agent of a deployment.
type agentRef struct {
	src *source
	dep *deployment
	ag  *deployedAgent
}

// agent finds agent name in the current deployments.
func (d *Daemon) agent(name string) (agentRef, error) {
	for _, s := range d.sourceList() {
		dep := s.cur.Load()
		if dep == nil {
			continue
		}
		if a, ok := dep.agents[name]; ok {
			return agentRef{src: s, dep: dep, ag: a}, nil
		}
	}
	return agentRef{}, api.Errorf(api.CodeUnknownAgent, "no deployed agent %q; GET /v1/agents lists them", name)
}

// agentRefs lists the deployed agents sorted by name; an agent that two
// sources define is the first source's.
func (d *Daemon) agentRefs() []agentRef {
	var out []agentRef
	seen := map[string]bool{}
	for _, s := range d.sourceList() {
		dep := s.cur.Load()
		if dep == nil {
			continue
		}
		for _, name := range dep.names {
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, agentRef{src: s, dep: dep, ag: dep.agents[name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ag.agent.Name < out[j].ag.agent.Name })
	return out
}
