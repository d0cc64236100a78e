package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/quirehq/quire/daemon/client"
)

type statusOptions struct {
	socket string
	json   bool
}

func statusCommand() *command {
	return &command{
		name:    "status",
		summary: "ask the running daemon what it has deployed and indexed",
		help: `
Prints, per agent, where it comes from, the deployed and the indexed commit,
how long the index has lagged behind and the last error.

Examples:
  quire status
  quire status --socket /tmp/quire.sock --json`,
		flags: func(fs *flag.FlagSet) any {
			o := &statusOptions{}
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of the daemon (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.BoolVar(&o.json, "json", false, "print the status as JSON")
			return o
		},
		run: runStatus,
	}
}

func runStatus(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*statusOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	sock := daemonSocket(o.socket, e)
	c := &client.Client{Socket: sock}
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("%w (is `quire serve` running on %s?)", err, sock)
	}
	if o.json {
		return writeJSON(e.stdout, st)
	}
	fmt.Fprintf(e.stdout, "quire %s, up since %s\n\n", st.Version, st.Started.Format("2006-01-02 15:04:05 MST"))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSOURCE\tDEPLOYED\tINDEXED\tLAG\tLAST ERROR")
	for _, a := range st.Agents {
		lag := "-"
		if a.LagSeconds > 0 {
			lag = fmt.Sprintf("%.1fs", a.LagSeconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Source, shortHash(a.Deployed), shortHash(a.Indexed), lag, a.LastError)
	}
	for _, a := range st.Agents {
		if a.OpenProposals > 0 {
			fmt.Fprintf(tw, "%s: %d open persona proposal(s) wait for review (branches proposals/%s/*; quire ui)\n", a.Name, a.OpenProposals, a.Name)
		}
	}
	if len(st.Pushes) > 0 {
		// The last push per repository: a client cut off before git's
		// report sees here whether its push was applied.
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "REPOSITORY\tLAST PUSH\tUSER\tRESULT\tREFS")
		for _, p := range st.Pushes {
			var refs []string
			for i, r := range p.Refs {
				if i == 3 {
					refs = append(refs, fmt.Sprintf("and %d more", len(p.Refs)-3))
					break
				}
				refs = append(refs, fmt.Sprintf("%s %s %s", strings.TrimPrefix(r.Name, "refs/heads/"), shortHash(r.New), r.Result))
			}
			result := p.Result
			if p.Unpack != "ok" {
				result += " (" + p.Unpack + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Repo, p.At.Format("2006-01-02 15:04:05 MST"), cmp.Or(p.User, "-"), result, strings.Join(refs, "; "))
		}
	}
	return tw.Flush()
}

func shortHash(h string) string {
	if len(h) == 40 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}
