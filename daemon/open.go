package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/memory/pgstore"
	"github.com/quirehq/quire/prompt"
)

// openStore opens the memory store of opts: opts.Store, the PostgreSQL
// store (or, with DatabaseWait, one that connects in the background) or
// the embedded one. older is pgstore.Options.Older.
func openStore(ctx context.Context, opts Options, older func(agent, commit, indexed string) bool) (memory.Store, error) {
	log, emb := component(opts.Logger, "store"), opts.Embedder
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

// openSources adds the sources of opts (the working trees, the hosted
// repositories and the upstream mirror, fetched once) and deploys each.
func (d *Daemon) openSources(ctx context.Context) error {
	given, err := d.openDirs()
	if err != nil {
		return err
	}
	if d.opts.ReposDir != "" {
		if err := d.openHosted(); err != nil {
			return err
		}
	}
	if !d.upstream.IsZero() {
		if err := d.openUpstream(ctx); err != nil {
			return err
		}
	}
	return d.deployAll(ctx, given)
}

// openDirs adds the --dir working trees, returning each one's path as
// the user gave it by its absolute path.
func (d *Daemon) openDirs() (given map[string]string, err error) {
	given = map[string]string{}
	for _, dir := range append([]string{d.opts.Dir}, d.opts.Dirs...) {
		if dir == "" {
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("--dir %s: %w", dir, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--dir %s: not a directory", dir)
		}
		d.sources.add(&source{kind: kindDir, name: abs, rootName: filepath.Base(abs), dir: abs})
		given[abs] = dir
	}
	return given, nil
}

// openHosted opens the git host of --repos and adds the repositories it
// holds.
func (d *Daemon) openHosted() error {
	host, err := gitsync.NewHost(d.opts.ReposDir, gitsync.HostOptions{
		// The one validation (agent.Check), and no agent that
		// another source serves already; the shared skills
		// repository's own (agent.SharedSkillsChecks).
		Validator:    pushChecks(d.pushValidator(), gitsync.TreeValidator(agent.SharedSkillsChecks())),
		Merge:        agent.Merge,
		AfterPush:    d.deployer.afterPush,
		Authenticate: gitUser(d.opts.GitTokens),
		AllowCreate:  d.opts.AllowCreate,
		Logger:       component(d.opts.Logger, "git"),
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
	return nil
}

// openUpstream adds the followed upstream, in its mirror under the
// cache directory, and fetches it once.
func (d *Daemon) openUpstream(ctx context.Context) error {
	up := d.upstream
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
	u := newUpstream(repo, up, d.opts.Poll, d.opts.FetchTimeout, component(d.opts.Logger, "upstream"))
	d.sources.add(&source{kind: kindUpstream, name: up.String(), rootName: root, repo: repo, up: u,
		refs: []string{upstreamLive.String(), upstreamMain.String(), "refs/remotes/upstream/master"}})
	u.firstFetch(ctx)
	return nil
}

// deployAll deploys every source. A working tree that is no workspace,
// or two sources that define one agent, stop the start; any other
// failure is logged and shown in status.
func (d *Daemon) deployAll(ctx context.Context, given map[string]string) error {
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
			s.deploys.setError(err)
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
