package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

type checkOptions struct {
	format    string
	skillsDir string
	staged    bool
}

func checkCommand() *command {
	return &command{
		name:    "check",
		args:    "[PATH...]",
		summary: "lint workspaces as a push is checked: files, budgets, agent.yaml, skills; exit 1 on errors",
		help: `
Checks each workspace PATH (default: the current directory) with the
function the git endpoint runs on a push (and the API on a write, and the
language server as you type), so what it passes a push accepts. Every file
(but .git) is checked, read by a prompt or not: symbolic links, FIFOs and
other special files, files over 1 MiB, text files that are not UTF-8 and
names that are not UTF-8 are errors. Then the content: agent.yaml keys and
values, context files over their budget (an error under the reject policy,
a warning otherwise, naming the lines that will be cut), files the total
budget clamps or drops, misspelled context file names, user directories
that are not encoded user ids, SKILL.md front matter (name, description,
limits, unknown keys), shadowed skills, and names in an agent.yaml skills:
allow list that match no skill (of the workspace, ~/.agents/skills,
--skills-dir or Quire's built-ins). A directory with no agent in it is an
error.

Inside a git work tree, files git ignores (.gitignore, .git/info/exclude,
core.excludesFile) and does not track are skipped: a push never carries
them. With --staged, PATH is checked as git's index holds it, which is
what the next commit records: the staged content of each file, not the
one on disk, and nothing untracked. Unmerged paths (a conflict) are
errors.

Findings are printed as path:line: severity: message. The exit status is 1
when there is at least one error, 0 otherwise, so check --staged works as
a pre-commit hook (run in the repository; git runs hooks at its top):

  printf '#!/bin/sh\nexec quire check --staged\n' > .git/hooks/pre-commit
  chmod +x .git/hooks/pre-commit

With --format json the findings are printed as one JSON object:
  {"problems": [{"path", "line", "column", "severity", "code", "message"}],
   "errors": N, "warnings": N}`,
		flags: func(fs *flag.FlagSet) any {
			o := &checkOptions{}
			fs.StringVar(&o.format, "format", "text", "output `format`: text or json")
			fs.StringVar(&o.skillsDir, "skills-dir", "", "managed skills `directory` shared by every agent, as the daemon's --skills-dir: an allow list may name its skills (also settable once as skills-dir: in the config file)")
			fs.BoolVar(&o.staged, "staged", false, "check what git's index holds (the next commit), not the files on disk")
			return o
		},
		run: runCheck,
	}
}

func runCheck(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*checkOptions)
	if o.format != "text" && o.format != "json" {
		return usagef("--format %q: use text or json", o.format)
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	// An allow list may name a skill of the shared tiers, as `quire
	// prompt` loads them.
	shared := agent.SharedSkills(e.getenv("HOME"), o.skillsDir)
	var all []workspace.Problem
	for _, dir := range args {
		probs, err := checkDir(ctx, dir, o.staged, shared)
		if err != nil {
			return err
		}
		all = append(all, probs...)
	}
	errs, warns := 0, 0
	for _, p := range all {
		switch p.Severity {
		case workspace.SeverityError:
			errs++
		case workspace.SeverityWarning:
			warns++
		}
	}
	if o.format == "json" {
		if all == nil {
			all = []workspace.Problem{}
		}
		if err := writeJSON(e.stdout, map[string]any{"problems": all, "errors": errs, "warnings": warns}); err != nil {
			return err
		}
	} else {
		for _, p := range all {
			fmt.Fprintln(e.stdout, p.String())
		}
		fmt.Fprintf(e.stdout, "%d error(s), %d warning(s)\n", errs, warns)
	}
	if errs > 0 {
		return exitError{exitFindings}
	}
	return nil
}

// checkDir checks the workspace at dir with the push validator's own
// function (agent.Check: every file, then the content) and returns its
// problems with paths relative to the current directory. staged checks
// git's index instead of the files on disk; otherwise the files git
// ignores are left out. shared are the skill tiers an allow list may name
// besides the workspace's own.
func checkDir(ctx context.Context, dir string, staged bool, shared []skills.Source) ([]workspace.Problem, error) {
	ws, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	fsys, probs, err := checkedTree(ctx, dir, staged)
	if err != nil {
		return nil, err
	}
	// One token cache for both opens of the tree (the agents for the
	// prune warning, and Check's).
	cache := prompt.NewTokenizer()
	if fsys == nil {
		fsys = ws.FS()
	} else if ws, err = prompt.Open(fsys, prompt.Options{RootName: rootName(dir), Tokenizer: cache}); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	probs = append(probs, agent.Check(ctx, fsys, agent.CheckOptions{RootName: rootName(dir), Cache: cache, SharedSkills: shared})...)
	for _, a := range ws.Agents() {
		probs = append(probs, pruneWarning(fsys, a, time.Now())...)
	}
	sort.SliceStable(probs, func(i, j int) bool {
		if probs[i].Path != probs[j].Path {
			return probs[i].Path < probs[j].Path
		}
		return probs[i].Line < probs[j].Line
	})
	for i := range probs {
		probs[i].Path = displayPath(dir, probs[i].Path)
	}
	return probs, nil
}

// checkedTree is the tree check reads for the workspace at dir when it is
// not the files on disk (nil): git's index, with an error for each
// unmerged path, when staged, else the files on disk but those git
// ignores.
func checkedTree(ctx context.Context, dir string, staged bool) (fs.FS, []workspace.Problem, error) {
	if !staged {
		ignored, err := gitsync.Ignored(ctx, dir)
		if err != nil {
			return nil, nil, fmt.Errorf("workspace %s: list the files git ignores: %w", dir, err)
		}
		if len(ignored) == 0 {
			return nil, nil, nil
		}
		return gitsync.Without(workspace.DirFS(dir), ignored), nil, nil
	}
	idx, err := gitsync.OpenStaged(ctx, dir)
	if errors.Is(err, gitsync.ErrNotWorkTree) {
		return nil, nil, fmt.Errorf("--staged checks git's index, and %s is not inside a git work tree: check it without --staged, or run git init there", dir)
	}
	if errors.Is(err, exec.ErrNotFound) {
		return nil, nil, errors.New("--staged reads git's index with the git CLI, which is not on PATH: install git")
	}
	if err != nil {
		return nil, nil, err
	}
	var probs []workspace.Problem
	for _, p := range idx.Unmerged() {
		probs = append(probs, workspace.Problem{Path: p, Severity: workspace.SeverityError, Code: "unmerged",
			Message: "unmerged (a merge conflict): resolve it and git add it"})
	}
	return idx, probs, nil
}

// rootName is the name of the agent at the root of the workspace in dir
// when it has no agent.yaml: the directory's name.
func rootName(dir string) string {
	abs, _ := filepath.Abs(dir)
	return filepath.Base(abs)
}

// openDir opens the workspace in a directory on disk.
func openDir(dir string) (*prompt.Workspace, error) {
	return openWorkspace(dir, "")
}

// displayPath turns a path inside the workspace at dir into one a user can
// open from the current directory.
func displayPath(dir, p string) string {
	if dir == "." || p == "" {
		return p
	}
	return path.Join(filepath.ToSlash(dir), p)
}

// pruneWarning warns when daily_log_retention_days makes a daemon delete
// daily logs of the workspace as it starts (imported history, say).
func pruneWarning(fsys fs.FS, a *prompt.Agent, now time.Time) []workspace.Problem {
	cfg := a.Config
	loc := cfg.Location
	if loc == nil {
		loc = time.UTC
	}
	old := memory.ExpiredLogs(fsys, a.Dir, cfg.DailyLogRetentionDays, now.In(loc))
	if len(old) == 0 {
		return nil
	}
	shown := old
	more := ""
	if len(shown) > 3 {
		shown, more = shown[:3], fmt.Sprintf(" and %d more", len(old)-3)
	}
	return []workspace.Problem{{Path: path.Join(a.Dir, workspace.ConfigFile), Severity: workspace.SeverityWarning, Code: "daily-log-prune",
		Message: fmt.Sprintf("daily_log_retention_days: %d: a daemon deletes %d daily logs older than that within a minute of starting (%s%s); set 0 to keep them",
			cfg.DailyLogRetentionDays, len(old), strings.Join(shown, ", "), more)}}
}
