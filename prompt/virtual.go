package prompt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// MaxInlineDelegation is the most delegation targets DELEGATION.md lists
// in full (with when to delegate, their team and availability); past it
// each target gets one line, its name and description only, so the file
// stays short and the model needs no tool to find a target.
const MaxInlineDelegation = 15

// deriveVirtual builds every agent's virtual files from the agents'
// agent.yaml (DELEGATION.md, TEAM.md, AVAILABILITY.md: behavior.md §2)
// and records the problems of links that point nowhere, on the agent's
// agent.yaml. Called once by Open, when every agent is known.
func (w *Workspace) deriveVirtual() {
	w.derived = make(map[*Agent][]VirtualFile, len(w.agents))
	for _, a := range w.agents {
		probs := w.checkLinks(a)
		if len(probs) > 0 { // a.Problems may be the config cache's: never append in place
			a.Problems = append(slices.Clip(a.Problems), probs...)
		}
		w.problems = append(w.problems, probs...)
		var files []VirtualFile
		delegation := w.delegationFile(a)
		if delegation != "" {
			files = append(files, VirtualFile{Name: workspace.DelegationFile, Content: delegation})
		}
		if s := w.teamFile(a); s != "" {
			files = append(files, VirtualFile{Name: workspace.TeamFile, Content: s})
		}
		files = append(files, VirtualFile{Name: workspace.AvailabilityFile, Content: availabilityFile(a, delegation != "")})
		w.derived[a] = files
	}
	w.problems = append(w.problems, w.teamProblems()...)
}

// teamFilePath is where a problem about team n goes: its first team
// file, or its directory when it has none.
func (w *Workspace) teamFilePath(n string) string {
	d := w.dir(workspace.TeamDir(n))
	for _, f := range workspace.TeamFiles {
		if hasEntry(d.entries, f) {
			return workspace.TeamDir(n) + "/" + f
		}
	}
	return workspace.TeamDir(n)
}

// teamProblems warns about a team directory no agent belongs to, and an
// agent whose team has no directory while others do (a misspelt name):
// either way files are silently not injected.
func (w *Workspace) teamProblems() []workspace.Problem {
	d := w.dir(workspace.TeamsDir)
	if d.absent || d.unknown {
		return nil
	}
	dirs := map[string]bool{}
	var names []string
	for _, e := range d.entries {
		if e.IsDir() {
			dirs[e.Name()] = true
			names = append(names, e.Name())
		}
	}
	members := map[string]bool{}
	var probs []workspace.Problem
	for _, a := range w.agents {
		team := a.Config.Team
		members[team] = true
		if team != "" && !dirs[team] && len(names) > 0 {
			probs = append(probs, workspace.Problem{Path: joinPath(a.Dir, workspace.ConfigFile), Severity: workspace.SeverityWarning, Code: "team-no-directory",
				Message: fmt.Sprintf("team %q has no directory %s/: its members get no team files (the team directories are %s)", team, workspace.TeamDir(team), strings.Join(names, ", "))})
		}
	}
	for _, n := range names {
		if !members[n] {
			probs = append(probs, workspace.Problem{Path: w.teamFilePath(n), Severity: workspace.SeverityWarning, Code: "team-no-members",
				Message: fmt.Sprintf("no agent belongs to team %q: its files reach no prompt (add team: %s to an agent.yaml)", n, n)})
		}
	}
	return probs
}

// checkLinks finds delegation targets that are not agents of the
// repository, or the agent itself.
func (w *Workspace) checkLinks(a *Agent) []workspace.Problem {
	var probs []workspace.Problem
	cfgPath := joinPath(a.Dir, workspace.ConfigFile)
	for _, t := range a.Config.Delegation {
		msg := ""
		switch other, ok := w.byName[t.Agent]; {
		case !ok:
			msg = fmt.Sprintf("delegation: %q is not an agent of this repository; its agents are %s", t.Agent, strings.Join(w.agentNames(), ", "))
		case other == a:
			msg = fmt.Sprintf("delegation: %q is this agent itself; list other agents", t.Agent)
		}
		if msg != "" {
			probs = append(probs, workspace.Problem{Path: cfgPath, Line: t.At.Line, Column: t.At.Column, Severity: workspace.SeverityError, Code: "agent-yaml-delegation", Message: msg})
		}
	}
	return probs
}

// virtualFiles are the virtual files of a request: the derived ones of
// a main session, each replaced by the caller's file of the same name,
// then the caller's other files in their order.
func (w *Workspace) virtualFiles(a *Agent, req *Request) []VirtualFile {
	derived := w.derived[a]
	if (req.Mode != ModeFull && req.Mode != ModeTask) || len(derived) == 0 {
		return req.VirtualFiles
	}
	if len(req.VirtualFiles) == 0 {
		return derived
	}
	out := make([]VirtualFile, 0, len(derived)+len(req.VirtualFiles))
	given := make(map[string]bool, len(req.VirtualFiles))
	for _, v := range req.VirtualFiles {
		given[v.Name] = true
	}
	for _, d := range derived {
		if !given[d.Name] {
			out = append(out, d)
		}
	}
	return append(out, req.VirtualFiles...)
}

// describe is how other agents' virtual files present agent a: its
// description, else its identity when agent.yaml sets one.
func describe(a *Agent) string {
	switch {
	case a.Config.Description != "":
		return a.Config.Description
	case a.Config.Identity != DefaultIdentity:
		return a.Config.Identity
	}
	return "(no description: its agent.yaml has no description)"
}

// delegationFile is DELEGATION.md: "" for an agent that delegates to no
// other agent. Unknown targets are left out (checkLinks reports them).
func (w *Workspace) delegationFile(a *Agent) string {
	var targets []DelegationTarget
	for _, t := range a.Config.Delegation {
		if other, ok := w.byName[t.Agent]; ok && other != a {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Delegation\n")
	if len(targets) > MaxInlineDelegation {
		fmt.Fprintf(&b, "You can hand work to %d agents of your repository, listed by what each does. When a request belongs to one of them rather than to you, say so and delegate it to the agent whose description fits best.\n", len(targets))
		for _, t := range targets {
			fmt.Fprintf(&b, "- %s: %s\n", t.Agent, describe(w.byName[t.Agent]))
		}
		return b.String()
	}
	b.WriteString("You can hand work to these agents of your repository. When a request belongs to one of them rather than to you, say so and delegate it.\n")
	for _, t := range targets {
		other := w.byName[t.Agent]
		fmt.Fprintf(&b, "\n## %s\n%s\n", t.Agent, describe(other))
		if t.When != "" {
			fmt.Fprintf(&b, "Delegate when: %s\n", t.When)
		}
		if other.Config.Team != "" {
			fmt.Fprintf(&b, "Team: %s\n", other.Config.Team)
		}
		if s := other.Config.Availability.Status; s != "" {
			fmt.Fprintf(&b, "Availability: %s\n", s)
		}
	}
	return b.String()
}

// teamFile is TEAM.md: the team, the agent's role and its teammates;
// "" for an agent in no team.
func (w *Workspace) teamFile(a *Agent) string {
	team := a.Config.Team
	if team == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Team\nYou are a member of the team %q", team)
	if a.Config.TeamRole != "" {
		fmt.Fprintf(&b, " as %s", a.Config.TeamRole)
	}
	b.WriteString(".\n")
	var mates []*Agent
	for _, o := range w.agents {
		if o != a && o.Config.Team == team {
			mates = append(mates, o)
		}
	}
	if len(mates) == 0 {
		b.WriteString("You are its only member so far.\n")
	} else {
		b.WriteString("Your teammates:\n")
		for _, o := range mates {
			role := ""
			if o.Config.TeamRole != "" {
				role = " (" + o.Config.TeamRole + ")"
			}
			fmt.Fprintf(&b, "- %s%s: %s\n", o.Name, role, describe(o))
		}
	}
	fmt.Fprintf(&b, "Work as one team: the team's own files (%s/%s/) are among your context files, and what the team discusses together is written to each member's daily log.\n", workspace.TeamsDir, team)
	return b.String()
}

// availabilityFile is AVAILABILITY.md, present in every main session:
// the agent's status, what is out of its scope, and the negative context
// of what it does not have (no one to delegate to, no team).
func availabilityFile(a *Agent, delegates bool) string {
	av := a.Config.Availability
	var b strings.Builder
	b.WriteString("# Availability\n")
	if av.Status != "" {
		fmt.Fprintf(&b, "Status: %s\n", av.Status)
	} else {
		b.WriteString("Status: available.\n")
	}
	if len(av.OutOfScope) > 0 {
		b.WriteString("Out of scope: decline these politely and say so; do not attempt them:\n")
		for _, s := range av.OutOfScope {
			fmt.Fprintf(&b, "- %s\n", oneLine(s))
		}
	}
	var none []string
	if !delegates {
		none = append(none, "- Delegation: there is no other agent you can hand work to; do not offer to transfer the conversation.\n")
	}
	if a.Config.Team == "" {
		none = append(none, "- A team: you work alone; do not speak for colleagues or promise their help.\n")
	}
	if len(none) > 0 {
		b.WriteString("These are NOT available to you:\n")
		for _, s := range none {
			b.WriteString(s)
		}
	}
	return b.String()
}
