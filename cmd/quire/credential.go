package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/quirehq/quire/daemon"
)

type credentialOptions struct {
	stateDir string
	hosts    []string
}

func credentialCommand() *command {
	return &command{
		name:    "git-credential",
		args:    "get|store|erase",
		summary: "git credential helper: hands git the token of the local daemon",
		help: `
A git credential helper (the way 'gh auth git-credential' is one): for
'get' it answers with the token the daemon keeps in its state directory
(--state-dir, the same default as 'quire serve'), so the daemon's own user
pushes without typing anything:

  git config --global credential.helper '!quire git-credential'

It answers only for http(s) URLs on this machine's loopback addresses
(127.0.0.0/8, ::1, localhost) and the hosts named with --host, so the token
is never offered to another server. 'store' and 'erase' do nothing: the
token lives in the state directory, and is replaced by deleting that file
and restarting the daemon.`,
		flags: func(fs *flag.FlagSet) any {
			o := &credentialOptions{}
			fs.StringVar(&o.stateDir, "state-dir", "", "the daemon's state `directory` (default $XDG_STATE_HOME/quire)")
			fs.Func("host", "also answer for `name` (repeatable)", func(v string) error {
				o.hosts = append(o.hosts, v)
				return nil
			})
			return o
		},
		run: runCredential,
	}
}

func runCredential(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*credentialOptions)
	if len(args) != 1 {
		return usagef("give one operation: get, store or erase")
	}
	switch args[0] {
	case "store", "erase":
		return nil
	case "get":
	default:
		return usagef("unknown operation %q: git calls the helper with get, store or erase", args[0])
	}
	req := map[string]string{}
	if e.stdin != nil {
		sc := bufio.NewScanner(e.stdin)
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				break
			}
			k, v, ok := strings.Cut(line, "=")
			if ok {
				req[k] = v
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read the request from git: %w", err)
		}
	}
	if p := req["protocol"]; p != "http" && p != "https" {
		return nil
	}
	if !credentialHost(req["host"], o.hosts) {
		return nil
	}
	dir := o.stateDir
	if dir == "" {
		dir = daemon.DefaultStateDir(e.getenv)
	}
	tok, err := daemon.LoadGitToken(dir, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil // no daemon has run here yet: let git ask elsewhere
	}
	if err != nil {
		return err
	}
	user := req["username"]
	if user == "" {
		user = "quire"
	}
	_, err = fmt.Fprintf(e.stdout, "username=%s\npassword=%s\n", user, tok)
	return err
}

// credentialHost reports whether host (git's "host" field, with an
// optional port) is one the token may be offered to.
func credentialHost(host string, names []string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	for _, n := range names {
		if strings.EqualFold(n, h) || strings.EqualFold(n, host) {
			return true
		}
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
