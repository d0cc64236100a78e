package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/skills"
)

// Run serves until ctx is done, then shuts down gracefully: in-flight
// pushes, commits and API requests finish, the socket is closed and
// removed, the store is closed.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.lock.release()
	defer d.store.Close()
	g, gctx := errgroup.WithContext(ctx)
	servers, err := d.listen(g)
	if err != nil {
		return err
	}
	close(d.ready)
	d.runParts(gctx, g)
	g.Go(func() error {
		<-gctx.Done()
		d.shutdown(context.WithoutCancel(ctx), servers)
		return nil
	})
	err = g.Wait()
	d.log.Info("stopped", StopCause(ctx)...)
	return err
}

// listen listens on the local API's socket, its TCP address (with
// --api-listen) and the git endpoint's (with --repos), and serves each
// in g. Once it returns, Ready's addresses are set.
func (d *Daemon) listen(g *errgroup.Group) ([]*http.Server, error) {
	sock, err := listenUnix(d.opts.Socket, d.log)
	if err != nil {
		return nil, err
	}
	var servers []*http.Server
	serve := func(name string, l net.Listener, h http.Handler) {
		srv := d.httpServer(name, h)
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
			return nil, fmt.Errorf("--api-listen %s: %w", d.opts.APIListen, err)
		}
		tokens := d.opts.Tokens
		if tokens == nil {
			tokens = api.Tokens{}
		}
		d.apiAddr = l.Addr().String()
		serve("api (tcp)", l, guardHTTP(d.tcpHandler(tokens), l.Addr(), d.opts.AllowedHosts))
		d.log.Info("console served on the API listener too", "url", "http://"+d.apiAddr+"/ui/")
	}
	d.listenUI(serve)
	if d.sources.host != nil {
		l, err := net.Listen("tcp", d.opts.GitListen)
		if err != nil {
			for _, s := range servers {
				s.Close()
			}
			return nil, fmt.Errorf("--git-listen %s: %w", d.opts.GitListen, err)
		}
		d.gitAddr = l.Addr().String()
		serve("git", l, guardHTTP(d.GitHandler(), l.Addr(), d.opts.AllowedHosts))
	}
	return servers, nil
}

// listenUI serves the console on its own listener (Options.UIListen);
// an address that cannot be listened on is a warning.
func (d *Daemon) listenUI(serve func(string, net.Listener, http.Handler)) {
	if d.opts.UIListen == "" {
		return
	}
	l, err := net.Listen("tcp", d.opts.UIListen)
	if err != nil {
		d.log.Warn("the console's own listener is off: choose another --ui-listen", "addr", d.opts.UIListen, "err", err)
		return
	}
	tokens := d.opts.Tokens
	if tokens == nil {
		tokens = api.Tokens{}
	}
	d.uiAddr = l.Addr().String()
	serve("console", l, guardHTTP(d.tcpHandler(tokens), l.Addr(), d.opts.AllowedHosts))
	d.log.Info("console listening", "addr", d.uiAddr, "url", "http://"+d.uiAddr+"/ui/", "login", "quire ui")
}

// httpServer is the server of listener name. Slow clients are cut off:
// headers within HeaderTimeout, an API request body within BodyTimeout
// (bodies are at most 4 MiB), idle connections after a minute. A push's
// body has no such bound here: the git endpoint bounds a push's duration
// itself.
func (d *Daemon) httpServer(name string, h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: d.opts.HeaderTimeout, IdleTimeout: time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(component(d.opts.Logger, "http").Handler(), slog.LevelWarn)}
	if name != "git" {
		srv.ReadTimeout = d.opts.BodyTimeout
	}
	return srv
}

// runParts runs the parts' loops in g until ctx ends: the store's late
// connection, the indexer, liveNotes, each source's follower or watcher,
// pruning, the shared skills' watcher and the hosted repositories'
// maintenance.
func (d *Daemon) runParts(ctx context.Context, g *errgroup.Group) {
	if l, ok := d.store.(*lazyStore); ok {
		g.Go(func() error {
			if err := l.connect(ctx); err != nil {
				return err
			}
			d.indexer.retryAll()
			return nil
		})
	}
	g.Go(func() error { return d.indexer.run(ctx) })
	g.Go(func() error { return d.notes.run(ctx) })
	for _, s := range d.sources.all() {
		switch s.kind {
		case kindUpstream:
			g.Go(func() error { return s.up.run(ctx, func(ctx context.Context) { d.writer.afterFetch(ctx, s) }) })
		case kindDir:
			log := component(d.opts.Logger, "watch")
			w := &gitsync.Watcher{Root: s.dir, Logger: log, Delay: agent.Delay, OnEvent: func(e gitsync.Event) {
				if _, err := d.deployer.deploy(ctx, s); err != nil {
					log.Warn("deploy after a file change failed", "source", s.id(), "err", err)
				}
			}}
			g.Go(func() error { return quiet(ctx, w.Run(ctx)) })
		}
	}
	g.Go(func() error { return d.writer.pruneLoop(ctx) })
	g.Go(func() error { return d.writer.consolidateLoop(ctx) })
	if d.opts.SkillsDir != "" || d.opts.HomeDir != "" {
		w := skills.NewWatcher(d.deployer.shared, component(d.opts.Logger, "skills"))
		g.Go(func() error { return quiet(ctx, w.Run(ctx)) })
		g.Go(func() error { return d.deployer.redeploySkills(ctx, w.Updates()) })
	}
	if host := d.sources.host; host != nil {
		g.Go(func() error { return quiet(ctx, host.Maintain(ctx, 10*time.Minute, 2000)) })
	}
}

// shutdown ends the event streams and shuts the servers down, giving
// requests in flight 30 s, and removes the socket.
func (d *Daemon) shutdown(ctx context.Context, servers []*http.Server) {
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d.events.close()
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			d.log.Warn("shutdown", "err", err)
		}
	}
	os.Remove(d.opts.Socket)
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
