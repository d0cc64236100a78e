package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

type promptOptions struct {
	dir, agent, user, session, channel, room string
	mode                                     string
	rev, now, tools, extra, model, sandbox   string
	skillsDir                                string
	report, json, showTime, spawn, tokens    bool
	contextWindow                            int
	contextShare                             float64
}

func promptCommand() *command {
	return &command{
		name:    "prompt",
		summary: "print the assembled system prompt of an agent (or its budget report)",
		help: `
Assembles the system prompt exactly as the daemon serves it, from the working
tree in --dir or, with --rev, from a git revision (read from the object
database; nothing is checked out).

--report prints the budget report instead: every context file the session
sees with its status (full, truncated, clamped, dropped, empty, missing),
original and injected chars and tokens, and the lines that were cut.
--json prints {"prompt": …, "report": …} for scripts.

--context-window scales the context files' total budget to a model's
context window: --context-share of it (default: agent.yaml's
budget.context_share, else 0.25), counted in tokens.

Examples:
  quire prompt --dir examples --agent concierge --user ines.carvalho
  quire prompt --agent concierge --session cron --report
  quire prompt --agent studybuddy --user alice --channel group --json
  quire prompt --rev HEAD~1 --agent concierge --report`,
		flags: func(fs *flag.FlagSet) any {
			o := &promptOptions{}
			fs.StringVar(&o.dir, "dir", ".", "workspace `directory` (with --rev: any directory in the repository)")
			fs.StringVar(&o.agent, "agent", "", "agent `name` (may be left out when the workspace has one agent)")
			fs.StringVar(&o.user, "user", "", "user `id`: use this user's files")
			fs.StringVar(&o.session, "session", "main", "`kind` of session: main, subagent or cron")
			fs.StringVar(&o.mode, "mode", "", "prompt `mode`: full, task, minimal or none (default: full for main, minimal for subagent and cron)")
			fs.StringVar(&o.channel, "channel", "dm", "`channel`: dm (private) or group")
			fs.StringVar(&o.room, "room", "", "room `id` of a group channel (adds rooms/<room>.md)")
			fs.StringVar(&o.rev, "rev", "", "read the workspace at git `revision` REV (HEAD, a branch, a tag, a hash)")
			fs.StringVar(&o.now, "now", "", "current `time` as RFC 3339 (default: now); decides the date and the daily logs")
			fs.StringVar(&o.tools, "tools", "", "JSON `file` with the tools the model has: [{\"name\": …, \"description\": …}]")
			fs.StringVar(&o.extra, "extra", "", "extra context `text` for <extra_context>")
			fs.StringVar(&o.model, "model", "", "model `name` for the Runtime section")
			fs.StringVar(&o.sandbox, "sandbox", "", "`description` of the sandbox the model runs in")
			fs.BoolVar(&o.showTime, "time", false, "include the time of day, not just the date")
			fs.BoolVar(&o.spawn, "spawn", false, "the model can spawn sub-agents")
			fs.BoolVar(&o.report, "report", false, "print the budget report instead of the prompt")
			fs.BoolVar(&o.json, "json", false, "print the prompt and the report as JSON")
			fs.BoolVar(&o.tokens, "tokens", false, "count the tokens of the whole prompt (slower)")
			fs.IntVar(&o.contextWindow, "context-window", 0, "the model's context window in `tokens`: the total budget becomes --context-share of it")
			fs.Float64Var(&o.contextShare, "context-share", 0, "`share` of --context-window the context files may take (default: agent.yaml's budget.context_share, else 0.25)")
			fs.StringVar(&o.skillsDir, "skills-dir", "", "managed skills `directory` shared by every agent, as the daemon's --skills-dir (also settable once as skills-dir: in the config file)")
			return o
		},
		run: runPrompt,
	}
}

func runPrompt(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*promptOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q (flags come before arguments; the workspace is given with --dir)", args[0])
	}
	req, err := o.request()
	if err != nil {
		return err
	}
	// Token counts only when they are shown: the report and --json count
	// exactly (remembered on disk by content, so an unchanged file is never
	// tokenised twice); the bare prompt estimates and loads no tokenizer.
	wopts := prompt.Options{EstimateTokens: !req.CountPromptTokens, Seeds: templates.Seeds}
	if req.CountPromptTokens {
		wopts.Tokenizer = prompt.NewTokenizer()
		defer rememberTokens(e, wopts.Tokenizer)()
	}
	ws, err := openWorkspaceOpts(o.dir, o.rev, wopts)
	if err != nil {
		return err
	}
	a, err := ws.Agent(req.Agent)
	if err != nil {
		return err
	}
	req.Agent = a.Name
	set, err := loadSkills(ws, a, o.dir, o.rev, e.getenv("HOME"), o.skillsDir)
	if err != nil {
		return err
	}
	req.Skills = set.PromptSkills(skills.Request{Agent: a.Name, User: req.User, Allow: a.Config.Skills})
	res, err := ws.Assemble(req)
	if err != nil {
		return err
	}
	probs := append(append([]workspace.Problem(nil), a.Problems...), res.Report.Problems...)
	for _, p := range probs {
		fmt.Fprintf(e.stderr, "%s\n", p)
	}
	if err := o.write(e, res); err != nil {
		return err
	}
	if workspace.HasErrors(probs) {
		return exitError{exitFindings}
	}
	return nil
}

// request is the prompt request the flags ask for; a flag with a value
// quire cannot use is a usage error.
func (o *promptOptions) request() (prompt.Request, error) {
	switch prompt.Session(o.session) {
	case prompt.SessionMain, prompt.SessionSubagent, prompt.SessionCron:
	default:
		return prompt.Request{}, usagef("--session %q: use main, subagent or cron", o.session)
	}
	if o.mode != "" && !slices.Contains(prompt.Modes, prompt.Mode(o.mode)) {
		return prompt.Request{}, usagef("--mode %q: use full, task, minimal or none", o.mode)
	}
	if o.channel != string(prompt.ChannelDM) && o.channel != string(prompt.ChannelGroup) {
		return prompt.Request{}, usagef("--channel %q: use dm or group", o.channel)
	}
	req := prompt.Request{
		Agent: o.agent, User: o.user, Session: prompt.Session(o.session), Mode: prompt.Mode(o.mode), Channel: prompt.Channel(o.channel), Room: o.room,
		Extra: o.extra, Model: o.model, Sandbox: o.sandbox, ShowTime: o.showTime, CanSpawn: o.spawn,
		CountPromptTokens: o.tokens || o.report || o.json,
		ContextWindow:     o.contextWindow, ContextShare: o.contextShare,
	}
	if o.contextShare != 0 && o.contextWindow == 0 {
		return prompt.Request{}, usagef("--context-share needs --context-window, the model's context window in tokens")
	}
	if o.contextWindow < 0 || o.contextShare < 0 || o.contextShare > 1 {
		return prompt.Request{}, usagef("--context-window must be a positive number of tokens and --context-share above 0 and at most 1")
	}
	req.Now = time.Now()
	if o.now != "" {
		t, err := time.Parse(time.RFC3339, o.now)
		if err != nil {
			return prompt.Request{}, usagef("--now %q: use RFC 3339, e.g. 2026-11-22T09:30:00Z", o.now)
		}
		req.Now = t
	}
	if o.tools != "" {
		data, err := os.ReadFile(o.tools)
		if err != nil {
			return prompt.Request{}, fmt.Errorf("--tools: %w", err)
		}
		if err := json.Unmarshal(data, &req.Tools); err != nil {
			return prompt.Request{}, fmt.Errorf("--tools %s: want a JSON list of {\"name\", \"description\"}: %w", o.tools, err)
		}
	}
	return req, nil
}

// rememberTokens gives tok the token counts remembered in the user's
// cache directory and returns what saves the new ones (a failure to save
// is a warning: counts are only remembered to save time).
func rememberTokens(e *env, tok *prompt.Tokenizer) (save func()) {
	p := tokenFilePath(e.getenv, tok.Encoding())
	if p == "" {
		return func() {}
	}
	store := &tokenFile{path: p}
	tok.SetStore(store)
	return func() {
		if err := store.save(); err != nil {
			fmt.Fprintf(e.stderr, "quire: %v (token counts are not remembered)\n", err)
		}
	}
}

// write prints the result as the flags ask: JSON, the report, or the
// prompt alone.
func (o *promptOptions) write(e *env, res prompt.Result) error {
	var err error
	switch {
	case o.json:
		err = writeJSON(e.stdout, res)
	case o.report:
		err = res.Report.WriteText(e.stdout)
	default:
		_, err = fmt.Fprint(e.stdout, res.Prompt)
	}
	return err
}

// loadSkills loads the skills agent a sees (agent.Skills): from its
// directory on disk, or from the git revision the workspace was read at,
// then ~/.agents/skills and the managed directory (--skills-dir), and the
// built-in skills: the tiers the daemon loads, so the prompt is the one it
// serves. extra are shared tiers that come first (a shared skills
// repository).
func loadSkills(ws *prompt.Workspace, a *prompt.Agent, dir, rev, home, managed string, extra ...skills.Source) (*skills.Set, error) {
	opts := agent.SkillOptions{Shared: append(extra, agent.SharedSkills(home, managed)...), Version: 1}
	if rev == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		opts.Dir = abs
	}
	return agent.Skills(ws.FS(), a, opts), nil
}

// openWorkspace opens the workspace in dir: on disk, or at a git revision
// of the repository dir belongs to.
func openWorkspace(dir, rev string) (*prompt.Workspace, error) {
	return openWorkspaceOpts(dir, rev, prompt.Options{})
}

// openWorkspaceOpts is openWorkspace with options (RootName is set here).
func openWorkspaceOpts(dir, rev string, opts prompt.Options) (*prompt.Workspace, error) {
	if rev == "" {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: %w", dir, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("workspace %s is not a directory; give the directory that holds agent.yaml (or the repository root)", dir)
		}
		abs, _ := filepath.Abs(dir)
		opts.RootName = filepath.Base(abs)
		ws, err := prompt.Open(workspace.DirFS(dir), opts)
		return ws, naming(abs, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	repo, err := gitsync.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("--rev needs a git repository: %w", err)
	}
	snap, err := repo.Snapshot(rev)
	if err != nil {
		return nil, err
	}
	// A committed link is refused as one in the working tree is (the
	// snapshot would read its target path as text).
	fsys := workspace.NoLinks(snap)
	name := filepath.Base(abs)
	if wt, err := repo.Git().Worktree(); err == nil {
		root := wt.Filesystem.Root()
		if sub, err := filepath.Rel(root, abs); err == nil && sub != "." {
			if fsys, err = fs.Sub(fsys, filepath.ToSlash(sub)); err != nil {
				return nil, err
			}
		} else {
			name = filepath.Base(root)
		}
	}
	opts.RootName = name
	ws, err := prompt.Open(fsys, opts)
	return ws, naming(abs+" at "+rev, err)
}

// naming puts the directory in front of Open's error for a tree with no
// agent, which cannot know it: "/etc: no agent here: …".
func naming(dir string, err error) error {
	if errors.Is(err, prompt.ErrNoAgent) {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return err
}
