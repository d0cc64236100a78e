package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

type initOptions struct {
	agent     string
	agentType string
	noGit     bool
}

// initIdentity is who quire init's first commit is by when git has no
// user.name and user.email.
var initIdentity = gitsync.Identity{Name: "Quire", Email: "quire@localhost"}

func initCommand() *command {
	return &command{
		name:    "init",
		args:    "[DIR]",
		summary: "create an agent workspace from Quire's templates (never overwrites)",
		help: `
Creates DIR (default: the current directory) as a workspace repository with
one agent in it. Without --agent the agent lives at the root of DIR and is
named after it; with --agent NAME it lives in DIR/agents/NAME, and you can
run init again with another name to add agents.

Unless DIR is already inside a git work tree, init makes it a git
repository (branch main) and commits the agent's files as its first commit,
"quire init: agent NAME", so --rev HEAD and a pre-commit hook work at once.
The commit is by git's user.name and user.email; when git has none, it is
by "Quire <quire@localhost>", and init says how to set yours and take the
commit over. Inside an existing work tree init makes no repository and no
commit: add and commit the files yourself. --no-git makes neither.

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
			fs.BoolVar(&o.noGit, "no-git", false, "make no git repository and no commit")
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
		if _, err := workspace.EncodeID(o.agent); err != nil || o.agent != filepath.Base(o.agent) {
			return usagef("--agent %q: use a plain name such as support or study-buddy", o.agent)
		}
		agentDir, name = filepath.Join(abs, "agents", o.agent), o.agent
	}
	if !o.noGit {
		if _, err := exec.LookPath("git"); err != nil {
			return fmt.Errorf("git is not on PATH: init makes %s a git repository with a first commit; install git, or run init with --no-git", dir)
		}
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
	if !o.noGit {
		if err := initGit(ctx, e, abs, name, append(res.Created, res.Kept...)); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "\nAgent %q (%s) is ready. Next:\n  edit %s\n  quire check %s\n  quire prompt --dir %s --agent %s\n",
		name, t, rel(abs, filepath.Join(agentDir, workspace.SoulFile)), dir, dir, name)
	return nil
}

// initGit makes abs a git repository whose first commit holds files,
// unless abs is inside a work tree already, and says what it did.
func initGit(ctx context.Context, e *env, abs, name string, files []string) error {
	root, err := gitsync.WorkTreeRoot(ctx, abs)
	if err == nil {
		fmt.Fprintf(e.stdout, "inside the git repository at %s: no new repository and no commit (add and commit the files yourself)\n", root)
		return nil
	}
	if !errors.Is(err, gitsync.ErrNotWorkTree) {
		return fmt.Errorf("git in %s: %w", abs, err)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.ToSlash(rel(abs, f))
	}
	msg := "quire init: agent " + name
	fellBack, err := gitsync.InitWorkTree(ctx, abs, paths, msg, initIdentity)
	if err != nil {
		return fmt.Errorf("make %s a git repository: %w", abs, err)
	}
	fmt.Fprintf(e.stdout, "initialised a git repository in %s (branch main) with a first commit: %s\n", abs, msg)
	if fellBack {
		fmt.Fprintf(e.stdout, "git has no user.name and user.email here, so the commit is by %s; set yours and take the commit over:\n"+
			"  git config --global user.name \"Your Name\"\n  git config --global user.email you@example.com\n"+
			"  git -C %s commit --amend --reset-author --no-edit\n", initIdentity, abs)
	}
	return nil
}

func rel(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil {
		return r
	}
	return p
}
