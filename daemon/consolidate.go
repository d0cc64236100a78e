package daemon

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
)

// consolidateMessage marks a consolidation's proposal commit: the
// schedule finds the last one by it.
const consolidateMessage = ": consolidate the daily logs into memory"

// consolidateLoop runs agent.yaml's consolidate schedules on hosted
// repositories: as often as daily logs are pruned (at most every minute),
// each agent whose last consolidation (its newest consolidation proposal
// branch, or this daemon's last try) is `every` ago or more gets a new
// proposal. Without a model (Options.LLM) it does nothing.
func (wr *writer) consolidateLoop(ctx context.Context) error {
	if wr.llm == nil {
		return nil
	}
	interval := min(time.Minute, wr.pruneInterval)
	tried := map[string]time.Time{} // agent → the last try's start
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, ref := range wr.sources.agentRefs() {
			if ctx.Err() != nil {
				return nil
			}
			wr.consolidateIfDue(ctx, ref, tried)
		}
		t.Reset(interval)
	}
}

// consolidateIfDue proposes a consolidation of ref's agent when its
// schedule says it is due.
func (wr *writer) consolidateIfDue(ctx context.Context, ref agentRef, tried map[string]time.Time) {
	a := ref.ag.agent
	sched := a.Config.Consolidate
	if sched == nil || ref.src.kind != kindRepo {
		return
	}
	now := wr.now()
	last := tried[a.Name]
	if b := lastConsolidation(ref); b.After(last) {
		last = b
	}
	if !last.IsZero() && now.Sub(last) < sched.Every {
		return
	}
	tried[a.Name] = now
	res, err := wr.consolidate(ctx, ref, sched.Days)
	var e *api.Error
	switch {
	case err == nil:
		wr.log.Info("scheduled consolidation proposed", "agent", a.Name, "branch", res.Branch, "every", sched.Every)
	case errors.As(err, &e) && e.Code == api.CodeNoChange:
		wr.log.Debug("scheduled consolidation: nothing to propose", "agent", a.Name, "why", e.Message)
	default:
		wr.log.Warn("scheduled consolidation failed; next try after consolidate.every", "agent", a.Name, "every", sched.Every, "err", err)
		wr.events.publish(api.Event{Type: "error", Agent: a.Name, Source: ref.src.id(), Message: "scheduled consolidation failed: " + err.Error()})
	}
}

// lastConsolidation is when the newest consolidation proposal branch of
// ref's agent was made (zero when there is none).
func lastConsolidation(ref agentRef) time.Time {
	s := ref.src
	names, err := s.repo.RefNames("refs/heads/proposals/" + ref.ag.agent.Name + "/")
	if err != nil {
		return time.Time{}
	}
	var last time.Time
	for _, name := range names {
		h, err := s.repo.Resolve(name)
		if err != nil {
			continue
		}
		c, err := s.repo.Git().CommitObject(h)
		if err != nil || !strings.Contains(c.Message, consolidateMessage) {
			continue
		}
		if c.Committer.When.After(last) {
			last = c.Committer.When
		}
	}
	return last
}
