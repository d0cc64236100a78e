package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"runtime"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/client"
)

type uiOptions struct {
	socket    string
	noBrowser bool
}

func uiCommand() *command {
	return &command{
		name:    "ui",
		summary: "print a login link to the running daemon's web console and open it",
		help: `
Asks the running daemon (over its unix socket) for a one-time login code,
prints the console's login link (the code is used up by the first sign-in
and expires after 5 minutes) and opens it in the browser when there is
one (xdg-open, open or start).

The console is served at /ui/ on --ui-listen (default 127.0.0.1:7878) and
on --api-listen of 'quire serve'. A bearer token of --token-file signs in
too, scoped to its agents.

Examples:
  quire ui
  quire ui --no-browser --socket /tmp/quire.sock`,
		flags: func(fs *flag.FlagSet) any {
			o := &uiOptions{}
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of the daemon (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.BoolVar(&o.noBrowser, "no-browser", false, "print the link only")
			return o
		},
		run: runUI,
	}
}

func runUI(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*uiOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	sock := daemonSocket(o.socket, e)
	c := &client.Client{Socket: sock}
	var code daemon.LoginCode
	if _, err := c.Do(ctx, "POST", daemon.CodeRoute, nil, nil, &code); err != nil {
		return fmt.Errorf("%w (is `quire serve` running on %s?)", err, sock)
	}
	if code.URL == "" {
		return errors.New("the daemon serves no console: start `quire serve` with --ui-listen or --api-listen")
	}
	fmt.Fprintf(e.stdout, "%s\n(one sign-in, within 5 minutes)\n", code.URL)
	if !o.noBrowser {
		openBrowser(ctx, e, code.URL)
	}
	return nil
}

// openBrowser opens url where there is a browser to open it; without
// one the printed link is all.
func openBrowser(ctx context.Context, e *env, url string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", url)
	case "windows":
		cmd = exec.CommandContext(ctx, "cmd", "/c", "start", "", url)
	default:
		if e.getenv("DISPLAY") == "" && e.getenv("WAYLAND_DISPLAY") == "" {
			return
		}
		cmd = exec.CommandContext(ctx, "xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return
	}
	go func() { _ = cmd.Wait() }()
}
