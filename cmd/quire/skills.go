package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

type skillsOptions struct {
	dir, agent, user, home, managed, shared string
	limit                                   int
	json                                    bool
	embedderOptions
}

// define registers the flags with the current values as defaults.
func (o *skillsOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&o.dir, "dir", o.dir, "workspace `directory`")
	fs.StringVar(&o.agent, "agent", o.agent, "agent `name` (may be left out when the workspace has one agent)")
	fs.StringVar(&o.user, "user", o.user, "user `id` whose access rules apply")
	fs.StringVar(&o.home, "home", o.home, "home `directory` whose .agents/skills is tier 3 (default: $HOME)")
	fs.StringVar(&o.managed, "skills-dir", o.managed, "managed skills `directory` (tier 4), as the daemon's --skills-dir")
	fs.StringVar(&o.managed, "managed", o.managed, "the old name of --skills-dir")
	fs.StringVar(&o.shared, "shared-skills", o.shared, "`directory` of a clone of the shared skills repository (the daemon's hosted repository skills): its skills with their visibility and grants")
	fs.IntVar(&o.limit, "limit", o.limit, "number of search `results`")
	fs.BoolVar(&o.json, "json", o.json, "print JSON")
}

func skillsCommand() *command {
	return &command{
		name:    "skills",
		args:    "list | search QUERY | show NAME | check DIR",
		summary: "list, search and show an agent's skills with tier, source and shadowing",
		help: `
Skills come from five tiers, highest first: the agent workspace's skills/,
its .agents/skills/, ~/.agents/skills/, the managed directory (--skills-dir) and
the skills built into quire. A skill in a higher tier shadows the same name
in lower ones. Each tier holds <slug>/SKILL.md, or <group>/<slug>/SKILL.md in
a directory without a SKILL.md of its own; the directory names the skill,
whatever its front matter says (a different name is a warning).
--shared-skills names a clone of the shared skills repository: a skill
there whose visibility is private is seen only by the agents (or the
agents of the repositories) its grants.yaml names, as the daemon does. Front-matter
keys of the Agent Skills specification, Claude Code and OpenClaw are known;
skill_unknown_keys: ignore in agent.yaml silences warnings about the others.

  quire skills list                 every skill in effect, its tier and file,
                                    what it shadows, and SKILL.md problems
  quire skills search QUERY         BM25 over name and description (slug,
                                    name, score, tier), hybrid (0.3 BM25 +
                                    0.7 cosine) with an --embedder other than
                                    none, as the daemon's; honours the
                                    agent.yaml skills allow list
  quire skills show NAME            the SKILL.md body with {baseDir} resolved
  quire skills check DIR            the checks a push to the shared skills
                                    repository gets, on a clone of it: every
                                    SKILL.md, its visibility, grants.yaml

Examples:
  quire skills list --dir examples --agent concierge
  quire skills search "convert a pdf" --agent concierge --json`,
		flags: func(fs *flag.FlagSet) any {
			o := &skillsOptions{dir: ".", limit: skills.DefaultLimit}
			o.define(fs)
			o.embedderOptions.define(fs)
			return o
		},
		run: runSkills,
	}
}

func runSkills(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*skillsOptions)
	if len(args) == 0 {
		return usagef("name a subcommand: list, search QUERY or show NAME")
	}
	sub, rest := args[0], args[1:]
	want := map[string]int{"list": 0, "search": 1, "show": 1, "check": 1}
	n, ok := want[sub]
	if !ok {
		return usagef("unknown subcommand %q: use list, search QUERY, show NAME or check DIR", sub)
	}
	if len(rest) != n {
		return usagef("%s takes %d argument(s), got %d (quote a query of several words)", sub, n, len(rest))
	}
	if sub == "check" {
		return skillsCheck(e, rest[0])
	}
	ws, err := openDir(o.dir)
	if err != nil {
		return err
	}
	a, err := ws.Agent(o.agent)
	if err != nil {
		return err
	}
	home := o.home
	if home == "" {
		home = e.getenv("HOME")
	}
	var extra []skills.Source
	if o.shared != "" {
		src, _, probs := skills.SharedSource(os.DirFS(o.shared), o.shared)
		if err := firstError(probs); err != nil {
			return err
		}
		extra = append(extra, src)
	}
	set, err := loadSkills(ws, a, o.dir, "", home, o.managed, extra...)
	if err != nil {
		return err
	}
	req := skills.Request{Agent: a.Name, Repo: rootName(o.dir), User: o.user, Allow: a.Config.Skills}

	switch sub {
	case "list":
		return skillsList(e, o, set, req)
	case "search":
		return skillsSearch(ctx, e, o, set, req, rest[0])
	default: // show
		return skillsShow(e, o, set, req, a.Name, rest[0])
	}
}

// skillsSearch prints the skills of set that match query best: hybrid
// with an embedder that makes vectors, as the daemon's search.
func skillsSearch(ctx context.Context, e *env, o *skillsOptions, set *skills.Set, req skills.Request, query string) error {
	emb, err := o.embedderOptions.open(ctx, e.getenv)
	if err != nil {
		return err
	}
	var hits []skills.Hit
	if emb.Dimensions() > 0 {
		if hits, err = set.HybridSearch(ctx, emb, nil, query, req, o.limit); err != nil {
			return err
		}
	} else {
		hits = set.Search(query, req, o.limit, nil)
	}
	if o.json {
		type hit struct {
			Slug  string      `json:"slug"`
			Name  string      `json:"name"`
			Score float64     `json:"score"`
			Tier  skills.Tier `json:"tier"`
			Path  string      `json:"path"`
		}
		out := []hit{}
		for _, h := range hits {
			out = append(out, hit{h.Skill.Slug, h.Skill.Name, h.Score, h.Skill.Tier, h.Skill.Path})
		}
		return writeJSON(e.stdout, out)
	}
	if len(hits) == 0 {
		fmt.Fprintf(e.stderr, "no skill matches %q\n", query)
		return exitError{exitFindings}
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tSCORE\tTIER\tDESCRIPTION")
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%.4f\t%s\t%s\n", h.Skill.Slug, h.Score, h.Skill.Tier, clip(h.Skill.Description, 70))
	}
	return tw.Flush()
}

// skillsShow prints the skill name as agent sees it; a skill the agent
// may not use is an error that says so.
func skillsShow(e *env, o *skillsOptions, set *skills.Set, req skills.Request, agent, name string) error {
	sk, ok := set.Show(req, name)
	if !ok {
		// A skill the access rules hide is answered as a missing one.
		if other, exists := set.Skill(name); exists && other.Access.Allows(&req) {
			return fmt.Errorf("skill %q exists but agent %s may not use it (agent.yaml skills allow list)", name, agent)
		}
		return fmt.Errorf("no skill %q; run 'quire skills list' to see the skills in effect", name)
	}
	if o.json {
		return writeJSON(e.stdout, map[string]any{"slug": sk.Slug, "name": sk.Name, "description": sk.Description, "tier": sk.Tier, "path": sk.Path, "location": sk.Location, "body": sk.ResolvedBody()})
	}
	_, err := fmt.Fprint(e.stdout, sk.ResolvedBody())
	return err
}

func skillsList(e *env, o *skillsOptions, set *skills.Set, req skills.Request) error {
	allowed := map[string]bool{}
	for _, sk := range set.List(req) {
		allowed[sk.Slug] = true
	}
	if o.json {
		type entry struct {
			Slug        string      `json:"slug"`
			Description string      `json:"description"`
			Tier        skills.Tier `json:"tier"`
			Path        string      `json:"path"`
			Allowed     bool        `json:"allowed"`
		}
		out := struct {
			Skills   []entry             `json:"skills"`
			Shadows  []skills.Shadow     `json:"shadows"`
			Problems []workspace.Problem `json:"problems"`
		}{Skills: []entry{}, Shadows: set.Shadows(), Problems: set.Problems()}
		for _, sk := range set.Skills() {
			if sk.Access.Allows(&req) {
				out.Skills = append(out.Skills, entry{sk.Slug, sk.Description, sk.Tier, sk.Path, allowed[sk.Slug]})
			}
		}
		if out.Shadows == nil {
			out.Shadows = []skills.Shadow{}
		}
		if out.Problems == nil {
			out.Problems = []workspace.Problem{}
		}
		return writeJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tTIER\tSOURCE\tNOTE")
	for _, sk := range set.Skills() {
		if !sk.Access.Allows(&req) {
			continue // the access rules hide it: not even its name
		}
		note := ""
		if !allowed[sk.Slug] {
			note = "not allowed for this agent/user"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sk.Slug, sk.Tier, sk.Path, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sh := range set.Shadows() {
		fmt.Fprintf(e.stdout, "shadowed: %s\n", sh)
	}
	for _, p := range set.Problems() {
		fmt.Fprintln(e.stdout, p)
	}
	return nil
}

// clip shortens s to at most n code points, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// skillsCheck prints the problems of the shared skills repository dir as
// a push to it would be refused with them; errors exit 1.
func skillsCheck(e *env, dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	probs := skills.CheckShared(workspace.DirFS(dir), dir)
	for _, p := range probs {
		fmt.Fprintln(e.stdout, p)
	}
	if firstError(probs) != nil {
		return exitError{exitFindings}
	}
	return nil
}

// firstError returns the first error of probs as an error, or nil.
func firstError(probs []workspace.Problem) error {
	for _, p := range probs {
		if p.Severity == workspace.SeverityError {
			return fmt.Errorf("%s", p)
		}
	}
	return nil
}
