package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/daemon/mcp"
)

type mcpOptions struct {
	agent, user         string
	socket, url, token  string
	dir, cacheDir       string
	skillsDir, logLevel string
	logFormat           string
	embedderOptions
}

func mcpCommand() *command {
	return &command{
		name:    "mcp",
		summary: "serve memory, skills and the system prompt to MCP clients on stdin and stdout",
		help: `
Speaks the Model Context Protocol on stdin and stdout for one agent (and
optionally one user): tools memory_search, memory_get, memory_append,
memory_write, skill_search and skill_get, the system prompt as the prompt
system_prompt, and the workspace files as resources quire://<agent>/<path>,
with notifications when a deploy changes them.

By default it talks to the running daemon on --socket (or on --url, a TCP
--api-listen address, with the bearer token in --token-file). With --dir it
serves a working tree by itself, as quire serve --dir does (writes go to
its files), and needs no daemon.

The daemon serves the same MCP over streamable HTTP at /mcp on its socket
and on --api-listen: /mcp?agent=NAME&user=ID.

Logs go to stderr, never to stdout.

Examples:
  quire mcp --agent concierge --user ines.carvalho
  quire mcp --dir examples --agent concierge --user ines.carvalho
  quire mcp --url http://127.0.0.1:7481 --token-file ~/.config/quire/token --agent concierge`,
		flags: func(fs *flag.FlagSet) any {
			o := &mcpOptions{}
			fs.StringVar(&o.agent, "agent", "", "agent `name` (may be left out when one agent is deployed)")
			fs.StringVar(&o.user, "user", "", "user `id` the session acts for: their own memory and USER.md (default: agent-level files only)")
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of the running daemon (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.StringVar(&o.url, "url", "", "reach the daemon's --api-listen at `URL` instead of the socket (needs --token-file)")
			fs.StringVar(&o.token, "token-file", "", "`file` whose first line holds the bearer token for --url")
			fs.StringVar(&o.dir, "dir", "", "serve the working tree in `directory` without a daemon")
			fs.StringVar(&o.cacheDir, "cache-dir", "", "`directory` for the embedding cache with --dir (default: the user cache directory)")
			fs.StringVar(&o.skillsDir, "skills-dir", "", "managed skills `directory` shared by every agent, with --dir")
			fs.StringVar(&o.logLevel, "log-level", "warn", "`level`: debug, info, warn or error")
			defineLogFormat(fs, &o.logFormat)
			o.embedderOptions.define(fs)
			return o
		},
		run: runMCP,
	}
}

func runMCP(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*mcpOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if o.dir != "" && (o.url != "" || o.socket != "") {
		return usagef("--dir serves a working tree by itself: leave out --socket and --url")
	}
	if o.url != "" && o.token == "" {
		return usagef("--url needs --token-file: the daemon's TCP listener only answers bearer tokens")
	}
	log, err := newLogger(e.stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var b mcp.Backend
	var where string
	if o.dir != "" {
		d, stop, err := embeddedDaemon(ctx, e, o, log)
		if err != nil {
			return err
		}
		defer stop()
		b, where = mcp.Local(d.Backend()), o.dir
	} else {
		c := &client.Client{Socket: o.socket}
		where = o.socket
		if where == "" {
			where = api.DefaultSocket(e.getenv)
		}
		if o.url != "" {
			tok, err := readToken(o.token)
			if err != nil {
				return err
			}
			c = &client.Client{BaseURL: o.url, Token: tok}
			where = o.url
		}
		b = mcp.Remote(c, log)
	}
	id := mcp.Identity{Agent: o.agent, User: o.user}
	agents, err := b.Agents(ctx)
	if err != nil {
		return fmt.Errorf("%w (is quire serve running? --dir serves a working tree without it)", err)
	}
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	switch {
	case id.Agent == "" && len(names) == 1:
		id.Agent = names[0]
	case id.Agent == "":
		return usagef("%s serves %d agents (%s): choose one with --agent", where, len(names), strings.Join(names, ", "))
	case !slices.Contains(names, id.Agent):
		return fmt.Errorf("%s has no agent %q that this caller may use (it serves: %s)", where, id.Agent, strings.Join(names, ", "))
	}
	return mcp.Serve(ctx, b, id, mcp.Options{Version: buildVersion(), Logger: log}, e.stdin, e.stdout)
}

// embeddedDaemon runs a daemon for --dir on a private socket and waits
// (up to 30 s) until it has indexed what it deployed, so that the first
// search sees the memory.
func embeddedDaemon(ctx context.Context, e *env, o *mcpOptions, log *slog.Logger) (*daemon.Daemon, func(), error) {
	emb, err := o.embedderOptions.open(ctx, e.getenv)
	if err != nil {
		return nil, nil, err
	}
	run, err := os.MkdirTemp("", "quire-mcp")
	if err != nil {
		return nil, nil, err
	}
	d, err := daemon.New(ctx, daemon.Options{
		Dir: o.dir, Socket: filepath.Join(run, "quire.sock"), Embedder: emb, CacheDir: o.cacheDir,
		SkillsDir: o.skillsDir, HomeDir: e.getenv("HOME"), Version: buildVersion(), Logger: log,
	})
	if err != nil {
		os.RemoveAll(run)
		return nil, nil, err
	}
	dctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(dctx) }()
	stop := func() {
		cancel()
		<-done
		os.RemoveAll(run)
	}
	select {
	case <-d.Ready():
	case err := <-done:
		cancel()
		os.RemoveAll(run)
		return nil, nil, err
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := d.WaitIndexed(wctx); err != nil {
		// Served all the same: a search sees what is indexed so far.
		log.Debug("memory is not indexed yet", "err", err)
	}
	return d, stop, nil
}

// readToken returns the first field of the first line of path that is
// neither blank nor a comment.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return strings.Fields(line)[0], nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("--token-file %s: %w", path, err)
	}
	return "", fmt.Errorf("--token-file %s: no token in it", path)
}
