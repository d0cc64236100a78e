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
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/mcp"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/xdg"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/memory/pgstore"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// Options configure a Daemon. At least one source (Dir or Dirs, ReposDir
// or Upstream) is required.
type Options struct {
	// SkillsDir is the managed skills directory (tier 4 of every agent's
	// skills); HomeDir, when set, adds HomeDir/.agents/skills (tier 3).
	// Both are watched: a change re-deploys every agent's skills.
	SkillsDir string
	HomeDir   string
	// Dir is a working tree served in dev mode: watched for changes,
	// writes go to its files (not committed). Dirs are more, each served
	// the same way (quire serve --dir, repeated); an agent two of them
	// define stops the start.
	Dir  string
	Dirs []string
	// ReposDir holds the bare repositories the daemon hosts and accepts
	// pushes for (<name>.git), served over smart HTTP on GitListen. One
	// daemon at a time: New takes a lock file there (holding its pid)
	// and refuses a directory another daemon holds. ReposDir and
	// Upstream need the git CLI (gitsync.MinGitVersion or later) on
	// PATH; New checks it.
	ReposDir string
	// GitListen is the address of the git endpoint, with ReposDir
	// (default 127.0.0.1:7480).
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
	// User information in its URL is taken out of it at once and used as
	// the credential (with a warning: see UpstreamCredential); the URL
	// is shown without it everywhere (gitsync.Remote).
	Upstream string
	Poll     time.Duration
	// UpstreamCredential is the upstream's credential, "USER:TOKEN" or a
	// token alone; it replaces one in the URL. Without either, git's own
	// credential helpers answer.
	UpstreamCredential string
	// FetchTimeout bounds one fetch of the upstream (default 1 min): an
	// upstream that stops answering is reported in the status while the
	// last good commit is served.
	FetchTimeout time.Duration
	// WriteTimeout bounds an API write from its arrival, waiting for
	// other writes and a fetch included (default 30 s):
	// it is answered by then and a second at most (outcome_unknown when
	// it may have been applied).
	WriteTimeout time.Duration
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
	// HeaderTimeout and BodyTimeout cut slow clients off: a request's
	// headers must arrive within HeaderTimeout (default 10 s), an API
	// request whole within BodyTimeout (default 30 s; git pushes are
	// bounded by the git endpoint itself).
	HeaderTimeout, BodyTimeout time.Duration
	// MCPSessions bounds the MCP sessions of streamable HTTP, on the
	// socket and the TCP listener together; zero fields are mcp's
	// defaults.
	MCPSessions mcp.SessionLimits
}

// DefaultOptions are the defaults of the fields of Options that have
// one and do not depend on the environment: what New uses for a zero
// field, and the defaults of `quire serve`'s flags.
func DefaultOptions() Options {
	return Options{
		GitListen:     "127.0.0.1:7480",
		Poll:          30 * time.Second,
		FetchTimeout:  time.Minute,
		WriteTimeout:  30 * time.Second,
		PruneInterval: time.Hour,
		IndexWait:     time.Second,
		IndexTimeout:  2 * time.Minute,
		HeaderTimeout: 10 * time.Second,
		BodyTimeout:   30 * time.Second,
	}
}

// withDefaults returns o with its zero fields set to their defaults:
// DefaultOptions, and the socket, the cache directory, the embedder,
// the logger and the clock.
func (o Options) withDefaults() Options {
	def := DefaultOptions()
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.Poll, def.Poll}, {&o.FetchTimeout, def.FetchTimeout}, {&o.WriteTimeout, def.WriteTimeout},
		{&o.PruneInterval, def.PruneInterval}, {&o.IndexWait, def.IndexWait}, {&o.IndexTimeout, def.IndexTimeout},
		{&o.HeaderTimeout, def.HeaderTimeout}, {&o.BodyTimeout, def.BodyTimeout},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	if o.GitListen == "" {
		o.GitListen = def.GitListen
	}
	if o.Socket == "" {
		o.Socket = api.DefaultSocket(os.Getenv)
	}
	if o.CacheDir == "" {
		o.CacheDir = xdg.CacheDir(os.Getenv)
		if o.CacheDir == "" {
			o.CacheDir = filepath.Join(xdg.PrivateTempDir(), "cache")
		}
	}
	if o.Embedder == nil {
		o.Embedder = memory.Builtin{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Daemon is `quire serve`, the composition root: it builds the parts
// (sourceSet, deployer, writer, indexer, reader, liveNotes, webhook)
// from Options, wires them, serves the local API and the git endpoint,
// runs every background loop under one errgroup, and owns shutdown.
type Daemon struct {
	opts     Options
	log      *slog.Logger
	store    memory.Store
	sources  *sourceSet
	deployer *deployer
	writer   *writer
	reader   *reader
	prompter *prompter
	indexer  *indexer
	notes    *liveNotes
	webhook  *webhook
	events   *broker
	metrics  *metrics
	// lock is the hold on ReposDir (nil without it), released when Run
	// returns.
	lock *reposLock

	// ready is closed once every listener listens; gitAddr and apiAddr
	// are their addresses.
	ready            chan struct{}
	gitAddr, apiAddr string

	// upstream is Options.Upstream with its credential (zero without).
	upstream gitsync.Remote

	mcpSessions *mcp.Sessions // shared by the listeners' /mcp
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
	if opts.Dir == "" && len(opts.Dirs) == 0 && opts.ReposDir == "" && opts.Upstream == "" {
		return nil, errors.New("no source of truth: give --dir, --repos or --upstream")
	}
	opts = opts.withDefaults()
	log := opts.Logger
	upstream, err := parseUpstream(&opts, log)
	if err != nil {
		return nil, err
	}
	started := opts.Now()
	if err := checkGit(ctx, opts); err != nil {
		return nil, err
	}
	var lock *reposLock
	if opts.ReposDir != "" {
		l, err := lockRepos(opts.ReposDir)
		if err != nil {
			return nil, err
		}
		lock = l
	}
	sources := &sourceSet{log: log}
	store, err := openStore(ctx, opts, sources.olderCommit)
	if err != nil {
		lock.release()
		return nil, err
	}
	tokens := prompt.NewTokenizer()
	events, m := newBroker(), newMetrics()
	ix := newIndexer(sources, store, events, m, log, opts.IndexTimeout)
	notes := newLiveNotes(store, sources, log)
	dp := &deployer{sources: sources, tokens: tokens, indexer: ix, notes: notes, events: events, metrics: m, log: log, now: opts.Now,
		shared:    skills.Options{HomeDir: opts.HomeDir, ManagedDir: opts.SkillsDir, NoBuiltin: true},
		indexWait: opts.IndexWait}
	d := &Daemon{
		opts:     opts,
		log:      log,
		store:    store,
		sources:  sources,
		deployer: dp,
		writer: &writer{sources: sources, deployer: dp, tokens: tokens, events: events, log: log, now: opts.Now,
			pruneInterval: opts.PruneInterval, writeTimeout: opts.WriteTimeout},
		reader: &reader{sources: sources, store: store, events: events, metrics: m, version: opts.Version, started: started, now: opts.Now,
			flushed: map[string]int{}},
		prompter: &prompter{sources: sources, now: opts.Now},
		indexer:  ix,
		notes:    notes,
		webhook:  &webhook{secret: opts.WebhookSecret, sources: sources, metrics: m, log: log},
		events:   events,
		metrics:  m,
		lock:     lock,
		ready:    make(chan struct{}),

		mcpSessions: mcp.NewSessions(opts.MCPSessions),
	}
	d.upstream = upstream
	if err := d.openSources(ctx, tokens); err != nil {
		d.store.Close()
		lock.release()
		return nil, err
	}
	return d, nil
}

// openStore opens the memory store of opts: opts.Store, the PostgreSQL
// store (or, with DatabaseWait, one that connects in the background) or
// the embedded one. older is pgstore.Options.Older.
func openStore(ctx context.Context, opts Options, older func(agent, commit, indexed string) bool) (memory.Store, error) {
	log, emb := opts.Logger, opts.Embedder
	switch {
	case opts.Store != nil:
		return opts.Store, nil
	case opts.DatabaseURL != "":
		open := func(ctx context.Context) (memory.Store, error) {
			st, err := pgstore.Open(ctx, pgstore.Options{URL: opts.DatabaseURL, Schema: opts.DatabaseSchema, Embedder: emb, Logger: log, Older: older})
			if err != nil {
				return nil, fmt.Errorf("open the PostgreSQL store: %w", err)
			}
			return st, nil
		}
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		st, err := open(octx)
		if err == nil {
			return st, nil
		}
		if !opts.DatabaseWait {
			return nil, err
		}
		// Serve prompts now; connect when PostgreSQL answers.
		log.Warn("PostgreSQL is unreachable; serving prompts, memory search waits for it", "err", err)
		return &lazyStore{open: open, log: log, lastErr: err}, nil
	default:
		if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("create cache directory: %w", err)
		}
		st, err := memstore.New(memstore.Options{Embedder: emb, Logger: log,
			CacheFile: filepath.Join(opts.CacheDir, "embeddings-"+safeName(emb.Model())+".bin")})
		if err != nil {
			return nil, fmt.Errorf("open the embedded store: %w", err)
		}
		return st, nil
	}
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// openSources adds the sources of opts (the working tree, the hosted
// repositories and the upstream mirror, fetched once) and deploys each.
func (d *Daemon) openSources(ctx context.Context, tokens *prompt.Tokenizer) error {
	given := map[string]string{} // a working tree's path → as the user gave it
	for _, dir := range append([]string{d.opts.Dir}, d.opts.Dirs...) {
		if dir == "" {
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("--dir %s: %w", dir, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("--dir %s: not a directory", dir)
		}
		d.sources.add(&source{kind: kindDir, name: abs, rootName: filepath.Base(abs), dir: abs})
		given[abs] = dir
	}
	if d.opts.ReposDir != "" {
		host, err := gitsync.NewHost(d.opts.ReposDir, gitsync.HostOptions{
			// The one validation (agent.Check), and no agent that
			// another source serves already.
			Validator:    gitsync.Validators{gitsync.TreeValidator(agent.WorkspaceChecks(agent.CheckOptions{Cache: tokens, SharedSkills: d.deployer.shared.Sources()})), gitsync.ValidatorFunc(d.sources.claims)},
			Merge:        agent.Merge,
			AfterPush:    d.deployer.afterPush,
			Authenticate: gitUser(d.opts.GitTokens),
			AllowCreate:  d.opts.AllowCreate,
			Logger:       d.log,
			// main is people's, live the daemon's (see gitsync.MainRef).
			Live:                true,
			AllowNonFastForward: d.opts.AllowNonFastForward,
		})
		if err != nil {
			return fmt.Errorf("--repos %s: %w", d.opts.ReposDir, err)
		}
		d.sources.host = host
		entries, err := os.ReadDir(d.opts.ReposDir)
		if err != nil {
			return fmt.Errorf("--repos %s: %w", d.opts.ReposDir, err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".git")
			if !ok || !e.IsDir() || !gitsync.ValidRepoName(name) {
				continue
			}
			if _, err := d.sources.hosted(name); err != nil {
				d.log.Warn("skipping hosted repository", "repo", name, "err", err)
			}
		}
	}
	if up := d.upstream; !up.IsZero() {
		mirrors, err := gitsync.NewHost(filepath.Join(d.opts.CacheDir, "upstream"), gitsync.HostOptions{Merge: agent.Merge})
		if err != nil {
			return fmt.Errorf("upstream mirror: %w", err)
		}
		name := "u-" + memory.Hash([]byte(up.String()))[:16]
		repo, err := mirrors.Create(name)
		if err != nil {
			return fmt.Errorf("upstream mirror: %w", err)
		}
		root := strings.TrimSuffix(pathBase(up.String()), ".git")
		u := newUpstream(repo, up, d.opts.Poll, d.opts.FetchTimeout, d.log)
		d.sources.add(&source{kind: kindUpstream, name: up.String(), rootName: root, repo: repo, up: u,
			refs: []string{upstreamLive.String(), upstreamMain.String(), "refs/remotes/upstream/master"}})
		u.firstFetch(ctx)
	}
	var claims []error
	for _, s := range d.sources.all() {
		if _, err := d.deployer.deploy(ctx, s); err != nil {
			var none *prompt.NoAgentError
			if s.kind == kindDir && errors.As(err, &none) {
				// A working tree that is no workspace (a typo, the wrong
				// directory) would serve an empty agent: refuse to start.
				return fmt.Errorf("--dir %s: %w", given[s.dir], none)
			}
			var dup *duplicateAgentError
			if errors.As(err, &dup) {
				// Which of two sources would serve the agent depends on
				// the order they are found in: refuse the start instead.
				claims = append(claims, err)
				continue
			}
			d.log.Error("initial deploy failed", "source", s.id(), "err", err)
			d.deployer.failed(s, err)
		}
	}
	if len(claims) > 0 {
		return fmt.Errorf("two sources define one agent: %w", errors.Join(claims...))
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

// Socket is the path of the local API's unix socket.
func (d *Daemon) Socket() string { return d.opts.Socket }

// Handler is the local API handler, and MCP's streamable HTTP transport
// at /mcp (with its OAuth resource metadata), with the given token
// scopes (nil for the unix socket).
func (d *Daemon) Handler(tokens api.Tokens) http.Handler {
	mux := http.NewServeMux()
	b := d.Backend()
	mux.Handle("POST "+HookPath, d.webhook) // HMAC, not a bearer token
	mux.Handle("/", api.Handler(b, api.Options{Tokens: tokens, Logger: d.log, Observe: d.metrics.observeRequest}))
	mcp.Mount(mux, mcp.Local(b), mcp.HTTPOptions{Options: mcp.Options{Version: d.opts.Version, Logger: d.log, Observe: d.metrics.observeRequest}, Tokens: tokens, Sessions: d.mcpSessions})
	return mux
}

// Backend is what the local API's routes and MCP call, in process: the
// reads and writes of the running daemon (`quire mcp --dir` serves MCP
// with it).
func (d *Daemon) Backend() mcp.LocalBackend { return backend{d.reader, d.prompter, d.writer} }

// GitHandler is the git endpoint (nil without --repos), behind the
// credentials of Options.GitTokens.
func (d *Daemon) GitHandler() http.Handler {
	if d.sources.host == nil {
		return nil
	}
	h := http.Handler(d.sources.host)
	if len(d.opts.GitTokens) > 0 {
		h = newGitAccess(d.opts.GitTokens).handler(h)
	}
	return d.metrics.countPushes(h)
}

// gitUser lets the hosted repositories record the basic-auth user name of
// a push; GitHandler has checked the credential before.
func gitUser(tokens []GitToken) func(user, token string) bool {
	if len(tokens) == 0 {
		return nil
	}
	return func(string, string) bool { return true }
}

// Run serves until ctx is done, then shuts down gracefully: in-flight
// pushes, commits and API requests finish, the socket is closed and
// removed, the store is closed.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.lock.release()
	defer d.store.Close()
	g, gctx := errgroup.WithContext(ctx)

	sock, err := listenUnix(d.opts.Socket, d.log)
	if err != nil {
		return err
	}
	servers := []*http.Server{}
	// Slow clients are cut off: headers within HeaderTimeout, an API
	// request body within BodyTimeout (bodies are at most 4 MiB), idle
	// connections after a minute. A push's body has no such bound here: the git endpoint
	// bounds a push's duration itself.
	serve := func(name string, l net.Listener, h http.Handler) {
		srv := &http.Server{Handler: h, ReadHeaderTimeout: d.opts.HeaderTimeout, IdleTimeout: time.Minute,
			MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelWarn)}
		if name != "git" {
			srv.ReadTimeout = d.opts.BodyTimeout
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
	if d.sources.host != nil {
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
	g.Go(func() error { return d.notes.run(gctx) })
	for _, s := range d.sources.all() {
		switch s.kind {
		case kindUpstream:
			g.Go(func() error { return s.up.run(gctx, func(ctx context.Context) { d.writer.afterFetch(ctx, s) }) })
		case kindDir:
			w := &gitsync.Watcher{Root: s.dir, Logger: d.log, Delay: agent.Delay, OnEvent: func(e gitsync.Event) {
				if _, err := d.deployer.deploy(gctx, s); err != nil {
					d.log.Warn("deploy after a file change failed", "source", s.id(), "err", err)
				}
			}}
			g.Go(func() error { return quiet(gctx, w.Run(gctx)) })
		}
	}
	g.Go(func() error { return d.writer.pruneLoop(gctx) })
	if d.opts.SkillsDir != "" || d.opts.HomeDir != "" {
		w := skills.NewWatcher(d.deployer.shared, d.log)
		g.Go(func() error { return quiet(gctx, w.Run(gctx)) })
		g.Go(func() error { return d.deployer.redeploySkills(gctx, w.Updates()) })
	}
	if host := d.sources.host; host != nil {
		g.Go(func() error { return quiet(gctx, host.Maintain(gctx, 10*time.Minute, 2000)) })
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
	d.log.Info("stopped", StopCause(ctx)...)
	return err
}

// StopCause names what ended ctx for the "stopped" line: the signal
// when the cause has one (as quire's main gives), else a cause other
// than a plain cancel.
func StopCause(ctx context.Context) []any {
	cause := context.Cause(ctx)
	var sig interface{ Signal() os.Signal }
	switch {
	case cause == nil:
		return nil
	case errors.As(cause, &sig):
		return []any{"signal", sig.Signal().String()}
	case cause != context.Canceled:
		return []any{"cause", cause.Error()}
	}
	return nil
}

// quiet drops the error of a part that stopped because ctx ended.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// WaitIndexed waits until the memory store holds every agent's deployed
// revision: each run of the indexer is a signal, no polling. It returns
// the error of a deployed revision's index run that failed (the indexer
// retries it; status says why), or ctx's error when ctx ends first. A
// revision is indexed only while Run runs.
func (d *Daemon) WaitIndexed(ctx context.Context) error {
	for _, s := range d.sources.all() {
		if err := waitCurrentIndexed(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Status is what GET /v1/status answers.
func (d *Daemon) Status(ctx context.Context) api.Status { return d.reader.Status(ctx) }
