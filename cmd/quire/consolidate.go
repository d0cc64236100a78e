package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/llm/draft"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

type consolidateOptions struct {
	dir, socket string
	days        int
	json        bool
	llm         llmOptions
}

func consolidateCommand() *command {
	return &command{
		name:    "consolidate",
		args:    "AGENT",
		summary: "ask a model to distil an agent's daily logs into MEMORY.md, proposed as a branch",
		help: `
Asks an OpenAI-compatible chat model for the agent's MEMORY.md with its
daily logs of the last --days days (today included, in the agent's time
zone) distilled into it. The result is checked as a push would check it and
becomes a branch proposals/<agent>/<n>:

  - with --dir, in that local git checkout (from HEAD, reading the logs of
    the work tree), asking the model of --llm-url;
  - without it, in the running daemon's repository, asking the daemon's
    model (quire serve --llm-url) about the logs it has deployed.

Nothing reaches main or what is deployed until a person merges the branch;
the quality of the summary depends on the model. agent.yaml's
"consolidate: {every: 24h, days: 7}" has the daemon propose one on that
schedule.

Examples:
  quire consolidate concierge
  quire consolidate --dir . --days 3 --llm-url http://localhost:8080 --llm-model qwen2.5 concierge`,
		flags: func(fs *flag.FlagSet) any {
			o := &consolidateOptions{}
			fs.StringVar(&o.dir, "dir", "", "propose in the local git checkout at `path` instead of the daemon's repository")
			fs.IntVar(&o.days, "days", 0, "`days` of daily logs to read (default: agent.yaml's consolidate.days, else 7)")
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of the daemon (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.BoolVar(&o.json, "json", false, "print the proposal as JSON")
			o.llm.define(fs)
			return o
		},
		run: runConsolidate,
	}
}

func runConsolidate(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*consolidateOptions)
	if len(args) != 1 {
		return usagef("name one agent: quire consolidate AGENT")
	}
	if o.days < 0 {
		return usagef("--days must be positive")
	}
	agent := args[0]
	var res api.ProposalResponse
	var err error
	if o.dir != "" {
		res, err = consolidateLocal(ctx, e, o, agent)
	} else {
		if o.llm.url != "" {
			return usagef("--llm-url is for --dir: without it the daemon asks its own model (quire serve --llm-url)")
		}
		c := &client.Client{Socket: daemonSocket(o.socket, e)}
		_, err = c.Do(ctx, "POST", "/v1/agents/"+url.PathEscape(agent)+"/consolidate", nil, api.ConsolidateRequest{Days: o.days}, &res)
	}
	return reportProposal(e, res, err, o.json, o.dir != "")
}

// consolidateLocal reads the agent and its logs from the work tree at
// o.dir and proposes on a branch there.
func consolidateLocal(ctx context.Context, e *env, o *consolidateOptions, name string) (api.ProposalResponse, error) {
	m, err := localModel(e, &o.llm)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	co, err := openCheckout(ctx, o.dir)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	tree := workspace.DirFS(co.root)
	ws, err := prompt.Open(tree, prompt.Options{EstimateTokens: true})
	if err != nil {
		return api.ProposalResponse{}, err
	}
	a, err := ws.Agent(name)
	if err != nil {
		return api.ProposalResponse{}, fmt.Errorf("agent %q: %w", name, err)
	}
	days := o.days
	if days == 0 && a.Config.Consolidate != nil {
		days = a.Config.Consolidate.Days
	}
	loc := a.Config.Location
	if loc == nil {
		loc = time.UTC
	}
	fmt.Fprintf(e.stderr, "quire consolidate: asking %s at %s…\n", m.Model(), m.Endpoint())
	d, err := draft.Consolidate(ctx, m, tree, draft.ConsolidateRequest{Agent: a, Days: days, Today: time.Now().In(loc)})
	if err != nil {
		return api.ProposalResponse{}, err
	}
	res, err := co.propose(ctx, a.Name, fmt.Sprintf("%s: consolidate the daily logs into memory, by %s", a.Name, m.Model()), d)
	res.Model = m.Model()
	return res, err
}
