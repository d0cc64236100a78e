package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/llm/draft"
)

type summonOptions struct {
	agent, dir, into, repo, socket string
	json                           bool
	llm                            llmOptions
}

func summonCommand() *command {
	return &command{
		name:    "summon",
		args:    "DESCRIPTION...",
		summary: "ask a model for a new agent's files, proposed as a branch for a person to merge",
		help: `
Asks an OpenAI-compatible chat model (OpenAI, Ollama, llama.cpp, vLLM) for a
new agent from a description, in one call: SOUL.md, IDENTITY.md, AGENTS.md
and, when the model writes them, TOOLS.md, HEARTBEAT.md and agent.yaml. The
files are checked as 'quire check' and a push would check them; a model's
invalid answer is refused with the problems listed (exit 1), and nothing is
proposed. What passes becomes a branch proposals/<agent>/<n>:

  - with --dir, in that local git checkout (from HEAD; the work tree and
    the checked-out branch are not touched), asking the model of --llm-url;
  - without it, in the running daemon's hosted repository (--repo when it
    hosts several), asking the daemon's model (quire serve --llm-url).

Nothing reaches main or what is deployed until a person merges the branch.
The quality of the files depends on the model: read them before you merge.
The key comes from --llm-key-file, $QUIRE_LLM_KEY or $OPENAI_API_KEY and is
never printed.

Examples:
  quire summon --agent ferris "a sarcastic but kind Rust code reviewer"
  quire summon --dir . --agent ferris --llm-url http://localhost:11434 --llm-model llama3.1 "a night porter for a small hotel"`,
		flags: func(fs *flag.FlagSet) any {
			o := &summonOptions{}
			fs.StringVar(&o.agent, "agent", "", "the new agent's `name` (lower-case letters, digits, - and _)")
			fs.StringVar(&o.dir, "dir", "", "propose in the local git checkout at `path` instead of the daemon's repository")
			fs.StringVar(&o.into, "into", "", "repository `directory` the agent's directory goes in (default: beside the other agents)")
			fs.StringVar(&o.repo, "repo", "", "the daemon's hosted repository `name` (when it hosts several)")
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of the daemon (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.BoolVar(&o.json, "json", false, "print the proposal as JSON")
			o.llm.define(fs)
			return o
		},
		run: runSummon,
	}
}

func runSummon(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*summonOptions)
	desc := strings.TrimSpace(strings.Join(args, " "))
	switch {
	case o.agent == "":
		return usagef("give the new agent's name with --agent")
	case desc == "":
		return usagef("describe the agent: quire summon --agent NAME DESCRIPTION")
	}
	if err := draft.CheckName(o.agent); err != nil {
		return usagef("%v", err)
	}
	var res api.ProposalResponse
	var err error
	if o.dir != "" {
		res, err = summonLocal(ctx, e, o, desc)
	} else {
		if o.llm.url != "" {
			return usagef("--llm-url is for --dir: without it the daemon asks its own model (quire serve --llm-url)")
		}
		c := &client.Client{Socket: daemonSocket(o.socket, e)}
		_, err = c.Do(ctx, "POST", "/v1/agents/"+url.PathEscape(o.agent)+"/summon", nil,
			api.SummonRequest{Description: desc, Repo: o.repo, Dir: o.into}, &res)
	}
	return reportProposal(e, res, err, o.json, o.dir != "")
}

// summonLocal asks the model of the flags and proposes on a branch of
// the checkout at o.dir.
func summonLocal(ctx context.Context, e *env, o *summonOptions, desc string) (api.ProposalResponse, error) {
	m, err := localModel(e, &o.llm)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	co, err := openCheckout(ctx, o.dir)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	tree, err := co.tree()
	if err != nil {
		return api.ProposalResponse{}, err
	}
	fmt.Fprintf(e.stderr, "quire summon: asking %s at %s…\n", m.Model(), m.Endpoint())
	d, err := draft.Summon(ctx, m, tree, draft.SummonRequest{Name: o.agent, Description: desc, Dir: o.into})
	if err != nil {
		return api.ProposalResponse{}, err
	}
	res, err := co.propose(ctx, o.agent, fmt.Sprintf("%s: summoned by %s", o.agent, m.Model()), d)
	res.Model = m.Model()
	return res, err
}
