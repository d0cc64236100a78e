package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/workspace"
	"github.com/quirehq/quire/skills"
)

type checkOptions struct {
	format string
}

func checkCommand() *command {
	return &command{
		name:    "check",
		args:    "[PATH...]",
		summary: "lint workspaces: budgets, agent.yaml, file names and encodings; exit 1 on errors",
		help: `
Checks each workspace PATH (default: the current directory) the way the git
endpoint will when you push: agent.yaml keys and values, context files over
their budget (an error under the reject policy, a warning otherwise, naming
the lines that will be cut), files the total budget clamps or drops,
invalid UTF-8, files over 1 MiB, misspelled context file names, user
directories that are not encoded user ids, and SKILL.md front matter
(name, description, limits, unknown keys) and shadowed skills.

Findings are printed as path:line: severity: message. The exit status is 1
when there is at least one error, 0 otherwise, so check works as a
pre-commit hook:

  # .git/hooks/pre-commit
  #!/bin/sh
  exec quire check

With --format json the findings are printed as one JSON object:
  {"problems": [{"path", "line", "column", "severity", "code", "message"}],
   "errors": N, "warnings": N}`,
		flags: func(fs *flag.FlagSet) any {
			o := &checkOptions{}
			fs.StringVar(&o.format, "format", "text", "output `format`: text or json")
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
	var all []prompt.Problem
	for _, dir := range args {
		probs, err := checkDir(dir)
		if err != nil {
			return err
		}
		all = append(all, probs...)
	}
	errs, warns := 0, 0
	for _, p := range all {
		switch p.Severity {
		case prompt.SeverityError:
			errs++
		case prompt.SeverityWarning:
			warns++
		}
	}
	if o.format == "json" {
		if all == nil {
			all = []prompt.Problem{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"problems": all, "errors": errs, "warnings": warns}); err != nil {
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

// checkDir checks the workspace at dir and returns its problems with paths
// relative to the current directory.
func checkDir(dir string) ([]prompt.Problem, error) {
	ws, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	probs := ws.Check()
	for _, a := range ws.Agents() {
		probs = append(probs, skills.CheckAgent(ws.FS(), a.Dir)...)
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

// openDir opens the workspace in a directory on disk.
func openDir(dir string) (*prompt.Workspace, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory; give the directory that holds agent.yaml (or the repository root)", dir)
	}
	abs, _ := filepath.Abs(dir)
	return prompt.Open(workspace.DirFS(dir), prompt.Options{RootName: filepath.Base(abs)})
}

// displayPath turns a path inside the workspace at dir into one a user can
// open from the current directory.
func displayPath(dir, p string) string {
	if dir == "." || p == "" {
		return p
	}
	return path.Join(filepath.ToSlash(dir), p)
}
