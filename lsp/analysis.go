package lsp

import (
	"path"
	"strings"
	"sync"
	"time"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

// analysis is the prompt workspace of one snapshot. The prompt package
// caches what it reads and budgets, so every feature asking about the same
// snapshot shares that work; a new snapshot gets a new analysis.
type analysis struct {
	fsys *overlay
	ws   *prompt.Workspace
	err  error

	mu     sync.Mutex
	skills map[string]*skills.Set // by agent directory
}

// skillsOf loads the skills agent ag sees in this snapshot, the way
// `quire prompt` and the daemon do (agent.Skills): the agent's skills/ and
// .agents/skills/ (from the editor's view), then home's ~/.agents/skills
// and the managed directory, then the built-ins. root is the workspace
// directory on disk, for {baseDir}.
func (a *analysis) skillsOf(ag *prompt.Agent, root, home, managed string) *skills.Set {
	a.mu.Lock()
	defer a.mu.Unlock()
	if set, ok := a.skills[ag.Dir]; ok {
		return set
	}
	set := agent.Skills(a.fsys, ag, agent.SkillOptions{Shared: agent.SharedSkills(home, managed), Dir: root, Version: 1})
	if a.skills == nil {
		a.skills = map[string]*skills.Set{}
	}
	a.skills[ag.Dir] = set
	return set
}

// analyses keeps the analysis of the current snapshot.
type analyses struct {
	cache *prompt.Tokenizer // shared: unchanged files are never re-tokenised or re-parsed
	// rootName names the agent at the root of a workspace without
	// agent.yaml: the root directory's name, as `quire prompt` does.
	rootName string
	mu       sync.Mutex
	last     *analysis
}

// of returns the analysis of fsys, opening the workspace on first use.
func (c *analyses) of(fsys *overlay) *analysis {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && c.last.fsys == fsys {
		return c.last
	}
	ws, err := prompt.Open(fsys, prompt.Options{Tokenizer: c.cache, RootName: c.rootName, Seeds: templates.Seeds})
	c.last = &analysis{fsys: fsys, ws: ws, err: err}
	return c.last
}

// place is where a file sits in the workspace: its agent, the user whose
// directory holds it, and its path relative to that directory.
type place struct {
	agent *prompt.Agent
	user  string
	rel   string
}

// locate finds the agent a slash path belongs to (the agent whose directory
// is the nearest ancestor) and the user directory it is in, if any.
func (a *analysis) locate(p string) (place, bool) {
	if a.ws == nil {
		return place{}, false
	}
	var best *prompt.Agent
	for _, ag := range a.ws.Agents() {
		if ag.Dir == "." || p == ag.Dir || strings.HasPrefix(p, ag.Dir+"/") {
			if best == nil || len(ag.Dir) > len(best.Dir) || best.Dir == "." {
				best = ag
			}
		}
	}
	if best == nil {
		return place{}, false
	}
	rel := p
	if best.Dir != "." {
		rel = strings.TrimPrefix(strings.TrimPrefix(p, best.Dir), "/")
	}
	pl := place{agent: best, rel: rel}
	if rest, ok := strings.CutPrefix(rel, workspace.UsersDir+"/"); ok {
		if dir, file, ok := strings.Cut(rest, "/"); ok {
			if user, err := workspace.DecodeID(dir); err == nil {
				pl.user, pl.rel = user, file
			}
		}
	}
	return pl, true
}

// request is the assembly a file's diagnostics come from: the fullest
// session that shows the file (main, private), for the user whose
// directory it is in; a room file needs the group channel and its room.
func (pl place) request(now time.Time) prompt.Request {
	req := prompt.Request{Agent: pl.agent.Name, User: pl.user, Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now}
	if rest, ok := strings.CutPrefix(pl.rel, workspace.RoomsDir+"/"); ok && path.Ext(rest) == ".md" && !strings.Contains(rest, "/") {
		if room, err := workspace.DecodeID(strings.TrimSuffix(rest, ".md")); err == nil {
			req.Channel, req.Room = prompt.ChannelGroup, room
		}
	}
	return req
}

// fileReport assembles the request for the file at slash path p and
// returns the report of that file along with the whole report.
func (a *analysis) fileReport(p string, now time.Time) (prompt.FileReport, *prompt.Report, prompt.Request, bool) {
	pl, ok := a.locate(p)
	if !ok {
		return prompt.FileReport{}, nil, prompt.Request{}, false
	}
	req := pl.request(now)
	res, err := a.ws.Assemble(req)
	if err != nil {
		return prompt.FileReport{}, nil, req, false
	}
	for _, f := range res.Report.Files {
		if f.Path == p {
			return f, &res.Report, req, true
		}
	}
	return prompt.FileReport{}, &res.Report, req, false
}

// percent is part of whole in whole percent, rounded.
func percent(part, whole int) int {
	if whole <= 0 {
		return 0
	}
	return (part*100 + whole/2) / whole
}

// usedByText names the files that used up the total budget.
func usedByText(names []string) string {
	switch len(names) {
	case 0:
		return "earlier files"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
