package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console"
	"github.com/quirehq/quire/daemon/mcp"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// Daemon is `quire serve`, the composition root: it builds the parts
// (sourceSet, deployer, writer, indexer, reader, liveNotes, webhook)
// from Options, wires them, serves the local API and the git endpoint,
// runs every background loop under one errgroup, and owns shutdown.
type Daemon struct {
	opts  Options
	log   *slog.Logger
	store memory.Store
	// tokens caches token counts, shared by the deployments and the
	// validation of pushes and writes.
	tokens   *prompt.Tokenizer
	sources  *sourceSet
	deployer *deployer
	writer   *writer
	reader   *reader
	prompter *prompter
	reviewer *reviewer
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
	uiAddr           string

	// sessions are the console's, shared by the TCP listeners.
	sessions *console.Sessions
	budgets  budgets // the overview's

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
	upstream, err := parseUpstream(&opts, component(opts.Logger, "upstream"))
	if err != nil {
		return nil, err
	}
	started := opts.Now()
	if err := checkGit(ctx, opts, component(opts.Logger, "daemon")); err != nil {
		return nil, err
	}
	var lock *reposLock
	if opts.ReposDir != "" {
		if lock, err = lockRepos(opts.ReposDir); err != nil {
			return nil, err
		}
	}
	sources := &sourceSet{log: component(opts.Logger, "sources")}
	store, err := openStore(ctx, opts, sources.olderCommit)
	if err != nil {
		lock.release()
		return nil, err
	}
	d := build(opts, sources, store, started)
	d.lock, d.upstream = lock, upstream
	if err := d.openSources(ctx); err != nil {
		d.store.Close()
		lock.release()
		return nil, err
	}
	return d, nil
}

// component is log for one part of the daemon: each line says which
// part logged it.
func component(log *slog.Logger, name string) *slog.Logger { return log.With("component", name) }

// build makes the parts of a daemon around its sources and store and
// wires them together.
func build(opts Options, sources *sourceSet, store memory.Store, started time.Time) *Daemon {
	log := opts.Logger
	tokens := prompt.NewTokenizer()
	events, m := newBroker(), newMetrics()
	ix := newIndexer(sources, store, events, m, component(log, "indexer"), opts.IndexTimeout)
	notes := newLiveNotes(store, sources, component(log, "livenotes"))
	dp := &deployer{sources: sources, tokens: tokens, indexer: ix, notes: notes, events: events, metrics: m, log: component(log, "deployer"), now: opts.Now,
		shared:    skills.Options{HomeDir: opts.HomeDir, ManagedDir: opts.SkillsDir, NoBuiltin: true},
		indexWait: opts.IndexWait}
	rv := &reviewer{sources: sources, deployer: dp, events: events, log: component(log, "review"), now: opts.Now}
	return &Daemon{
		reviewer: rv,
		opts:     opts,
		log:      component(log, "daemon"),
		store:    store,
		tokens:   tokens,
		sources:  sources,
		deployer: dp,
		writer: &writer{sources: sources, deployer: dp, tokens: tokens, events: events, log: component(log, "writer"), now: opts.Now,
			pruneInterval: opts.PruneInterval, writeTimeout: opts.WriteTimeout, review: rv, llm: opts.LLM},
		reader: &reader{sources: sources, store: store, events: events, metrics: m, version: opts.Version, started: started, now: opts.Now, skillSearch: newSkillSearch(opts.Embedder),
			flushed: map[string]int{}},
		prompter:    &prompter{sources: sources, now: opts.Now},
		indexer:     ix,
		notes:       notes,
		webhook:     &webhook{secret: opts.WebhookSecret, sources: sources, metrics: m, log: component(log, "webhook")},
		events:      events,
		metrics:     m,
		ready:       make(chan struct{}),
		mcpSessions: mcp.NewSessions(opts.MCPSessions),
		sessions:    console.NewSessions(opts.Now),
	}
}

// UIAddr is the address of the console's own listener, once Ready (""
// without --ui-listen).
func (d *Daemon) UIAddr() string { return d.uiAddr }

// Socket is the path of the local API's unix socket.
func (d *Daemon) Socket() string { return d.opts.Socket }

// Handler is the local API handler, and MCP's streamable HTTP transport
// at /mcp (with its OAuth resource metadata), with the given token
// scopes (nil for the unix socket).
func (d *Daemon) Handler(tokens api.Tokens) http.Handler {
	mux := http.NewServeMux()
	b := d.Backend()
	mux.Handle("POST "+HookPath, d.webhook) // HMAC, not a bearer token
	if tokens == nil {
		mux.HandleFunc("POST "+CodeRoute, d.issueCode) // the socket only: `quire ui`
	}
	mux.Handle("/", api.Handler(b, api.Options{Tokens: tokens, People: d.opts.People, Logger: component(d.opts.Logger, "api"), Observe: d.metrics.observeRequest}))
	mcp.Mount(mux, mcp.Local(b), mcp.HTTPOptions{Options: mcp.Options{Version: d.opts.Version, Logger: component(d.opts.Logger, "mcp"), Observe: d.metrics.observeRequest}, Tokens: tokens, Sessions: d.mcpSessions})
	return mux
}

// Backend is what the local API's routes and MCP call, in process: the
// reads and writes of the running daemon (`quire mcp --dir` serves MCP
// with it).
func (d *Daemon) Backend() mcp.LocalBackend {
	return backend{d.reader, d.prompter, d.writer, d.reviewer}
}

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
