package daemon

import (
	"context"
	"fmt"
	"sync"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console"
	"github.com/quirehq/quire/prompt"
)

// budgets caches each deployed agent's budget use for the overview: a
// deployment's files do not change, so it is assembled once per
// deployment (keyed by the deployed agent, new with every deployment).
type budgets struct {
	mu sync.Mutex
	m  map[*deployedAgent]budgetUse
}

type budgetUse struct {
	budget   console.BudgetOverview
	warnings []string
}

// of returns a's budget use in dep, assembling its prompt the first time.
func (b *budgets) of(dep *deployment, a *deployedAgent) budgetUse {
	b.mu.Lock()
	u, ok := b.m[a]
	b.mu.Unlock()
	if ok {
		return u
	}
	u = budgetOf(dep, a)
	b.mu.Lock()
	if b.m == nil {
		b.m = map[*deployedAgent]budgetUse{}
	}
	b.m[a] = u
	b.mu.Unlock()
	return u
}

// forget drops what is no longer deployed.
func (b *budgets) forget(live map[*deployedAgent]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for a := range b.m {
		if !live[a] {
			delete(b.m, a)
		}
	}
}

// budgetOf is the budget use of a's own prompt (main session, DM): the
// numbers of `quire prompt --report` and the language server — what the
// context files inject against the total budget, in the budget's unit —
// with the files cut or dropped.
func budgetOf(dep *deployment, a *deployedAgent) budgetUse {
	res, err := dep.ws.Assemble(prompt.Request{Agent: a.agent.Name, Session: prompt.SessionMain, Channel: prompt.ChannelDM,
		Skills: a.skills.PromptSkills(a.request())})
	if err != nil {
		return budgetUse{warnings: []string{fmt.Sprintf("cannot assemble the prompt: %v", err)}}
	}
	r := &res.Report
	bu := &r.Budget
	u := budgetUse{budget: console.BudgetOverview{Unit: bu.UnitName(), Injected: r.InjectedIn(), Total: bu.Total(), PerFile: bu.PerFile(),
		TotalChars: r.InjectedChars, LimitChars: bu.TotalChars, Cut: []string{}, Dropped: []string{}}, warnings: []string{}}
	for _, f := range r.Files {
		orig, injected, _ := f.In(bu)
		if orig > u.budget.Largest.Size {
			u.budget.Largest = console.LargestFile{File: f.Name, Size: orig, Injected: injected, Limit: bu.PerFile(), Status: string(f.Status)}
		}
		u.warnings = append(u.warnings, fileWarnings(f, bu, &u.budget)...)
	}
	for _, p := range r.Problems {
		u.warnings = append(u.warnings, p.String())
	}
	return u
}

// fileWarnings says what the budget did to f (cut, dropped, or 80 % of
// its per-file budget used), and lists it in b's Cut or Dropped.
func fileWarnings(f prompt.FileReport, bu *prompt.Budget, b *console.BudgetOverview) []string {
	orig, injected, _ := f.In(bu)
	unit := bu.UnitName()
	switch f.Status {
	case prompt.StatusTruncated, prompt.StatusClamped:
		b.Cut = append(b.Cut, f.Name)
		return []string{fmt.Sprintf("%s is cut: %s of %s %s in the prompt", f.Name, prompt.GroupThousands(injected), prompt.GroupThousands(orig), unit)}
	case prompt.StatusDropped:
		b.Dropped = append(b.Dropped, f.Name)
		return []string{fmt.Sprintf("%s is dropped: the total budget was used up", f.Name)}
	}
	if per := bu.PerFile(); per > 0 && orig*100 >= per*prompt.NearBudgetPercent {
		return []string{fmt.Sprintf("%s uses %d %% of its %s-%s budget", f.Name, orig*100/per, prompt.GroupThousands(per), unit)}
	}
	return nil
}

// overview answers the console's GET /ui/api/overview for the agents
// allows admits.
func (d *Daemon) overview(ctx context.Context, allows func(string) bool) (console.Overview, error) {
	out := console.Overview{Agents: []console.AgentOverview{}, Sources: []console.SourceOverview{}}
	now := d.opts.Now()
	live := map[*deployedAgent]bool{}
	for _, s := range d.sources.all() {
		dep := s.deploys.current()
		statuses, _ := sourceStatus(s, now)
		out.Sources = append(out.Sources, sourceOverview(s))
		if dep == nil {
			continue
		}
		counts := proposalCounts(s)
		for _, st := range statuses {
			a, ok := dep.agents[st.Name]
			if !ok || !allows(st.Name) {
				continue
			}
			live[a] = true
			u := d.budgets.of(dep, a)
			ao := console.AgentOverview{Name: st.Name, Source: st.Source, Commit: st.Deployed, DeployedAt: st.DeployAt,
				Index: indexOverview(st), Budget: u.budget, Warnings: u.warnings, OpenProposals: counts[st.Name]}
			if st.LastError != "" {
				ao.Warnings = append(append([]string(nil), u.warnings...), st.LastError)
			}
			out.Agents = append(out.Agents, ao)
		}
	}
	d.budgets.forget(live)
	for _, e := range d.events.lastEvents() {
		if e.Agent == "" || allows(e.Agent) {
			out.Recent = append(out.Recent, e)
		}
	}
	if out.Recent == nil {
		out.Recent = []api.Event{}
	}
	return out, ctx.Err()
}

func indexOverview(st api.AgentStatus) console.IndexOverview {
	switch {
	case st.Indexed == st.Deployed:
		return console.IndexOverview{State: "current"}
	case st.LastError != "":
		return console.IndexOverview{State: "failed", Lag: st.LagSeconds}
	}
	return console.IndexOverview{State: "indexing", Lag: st.LagSeconds}
}

func sourceOverview(s *source) console.SourceOverview {
	so := console.SourceOverview{Name: s.id(), State: "ok"}
	errs, lag := s.up.health()
	so.Lag = lag.Seconds()
	if e := s.deploys.lastError(); e != "" {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		so.State, so.Error = "failing", fmt.Sprint(errs)
	}
	return so
}
