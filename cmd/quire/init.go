package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
)

type initOptions struct {
	agent     string
	agentType string
}

func initCommand() *command {
	return &command{
		name:    "init",
		args:    "[DIR]",
		summary: "create an agent workspace from Quire's templates (never overwrites)",
		help: `
Creates DIR (default: the current directory) as a workspace repository with
one agent in it, and runs 'git init' there unless DIR is already inside a git
repository. Without --agent the agent lives at the root of DIR and is named
after it; with --agent NAME it lives in DIR/agents/NAME, and you can run init
again with another name to add agents.

Files that already exist are left alone, so init is safe to re-run: it only
fills in what is missing.

Agent types:
  predefined  the persona (AGENTS, SOUL, IDENTITY, TOOLS, USER_PREDEFINED,
              HEARTBEAT) is shared; each user has their own USER.md and
              BOOTSTRAP.md (seeded on their first request)
  open        every user may have their own copy of every context file;
              the files in the agent directory are the defaults

Examples:
  quire init my-agent
  quire init team-repo --agent support --type predefined
  quire init . --agent tutor --type open`,
		flags: func(fs *flag.FlagSet) any {
			o := &initOptions{}
			fs.StringVar(&o.agent, "agent", "", "agent `name`; the agent is created in DIR/agents/NAME")
			fs.StringVar(&o.agentType, "type", string(prompt.TypePredefined), "agent `type`: predefined or open")
			return o
		},
		run: runInit,
	}
}

func runInit(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*initOptions)
	if len(args) > 1 {
		return usagef("init takes at most one directory, got %d arguments", len(args))
	}
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	t := prompt.AgentType(o.agentType)
	if t != prompt.TypePredefined && t != prompt.TypeOpen {
		return usagef("--type %q: use predefined or open", o.agentType)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	agentDir, name := abs, filepath.Base(abs)
	if o.agent != "" {
		if _, err := prompt.EncodeID(o.agent); err != nil || o.agent != filepath.Base(o.agent) {
			return usagef("--agent %q: use a plain name such as support or study-buddy", o.agent)
		}
		agentDir, name = filepath.Join(abs, "agents", o.agent), o.agent
	}
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", agentDir, err)
	}
	res, err := templates.Seed(agentDir, templates.AgentFiles(name, t))
	for _, p := range res.Created {
		fmt.Fprintf(e.stdout, "created %s\n", rel(abs, p))
	}
	for _, p := range res.Kept {
		fmt.Fprintf(e.stdout, "kept    %s (exists)\n", rel(abs, p))
	}
	if err != nil {
		return err
	}
	if _, err := gogit.PlainOpenWithOptions(abs, &gogit.PlainOpenOptions{DetectDotGit: true}); errors.Is(err, gogit.ErrRepositoryNotExists) {
		// main is the branch the daemon deploys, whatever git's default.
		if _, err := gogit.PlainInitWithOptions(abs, &gogit.PlainInitOptions{
			InitOptions: gogit.InitOptions{DefaultBranch: plumbing.Main},
		}); err != nil {
			return fmt.Errorf("git init %s: %w", abs, err)
		}
		fmt.Fprintf(e.stdout, "initialised a git repository in %s\n", abs)
	}
	fmt.Fprintf(e.stdout, "\nAgent %q (%s) is ready. Next:\n  edit %s\n  quire check %s\n  quire prompt --dir %s --agent %s\n",
		name, t, rel(abs, filepath.Join(agentDir, prompt.SoulFile)), dir, dir, name)
	return nil
}

func rel(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil {
		return r
	}
	return p
}
