package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// teamAppend is MemoryAppend for a team conversation (req.Agents): the
// entry lands in the daily log of ref's agent and of each teammate named,
// each in its own timezone (and the user's own log when a user is given),
// in one commit. Every agent named must be in ref's agent's team and in
// the same repository.
func (wr *writer) teamAppend(ctx context.Context, ref agentRef, sc string, req api.AppendRequest) (api.WriteResponse, error) {
	members, err := wr.teamMembers(ref, req.Agents)
	if err != nil {
		return api.WriteResponse{}, err
	}
	var now time.Time
	for _, a := range members {
		if now, err = wr.checkAppend(a.Name, a.Config.WriteLimitBytes, req); err != nil {
			return api.WriteResponse{}, err
		}
	}
	n := len(members)
	times, rels, written := make([]time.Time, n), make([]string, n), make([][]byte, n)
	names := make([]string, n)
	for i, a := range members {
		loc := a.Config.Location
		if loc == nil {
			loc = time.UTC
		}
		times[i], names[i] = now.In(loc), a.Name
		rels[i] = joinSlash(sc, dailyLogPath(times[i], loc))
	}
	build := func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		var out []gitsync.FileWrite
		for i, a := range members {
			full := joinSlash(a.Dir, rels[i])
			cur, _ := fs.ReadFile(fsys, full)
			written[i] = appendEntry(cur, times[i], req.Room, req.User, req.Text)
			if len(written[i]) > workspace.MaxFileBytes {
				return nil, api.Errorf(api.CodeFileLimit, "%s of agent %q would grow past the %d-byte file limit", rels[i], a.Name, workspace.MaxFileBytes)
			}
			w := []gitsync.FileWrite{{Path: full, Content: written[i]}}
			if i > 0 { // the commit adds the seeds of ref's agent itself
				w = withSeeds(fsys, a, req.User, w)
			}
			out = append(out, w...)
		}
		return out, nil
	}
	msg := fmt.Sprintf("%s: team memory entry in %s for %s", names[0], rels[0], strings.Join(names, ", "))
	c, err := wr.commitChange(ctx, ref, req.User, msg, wr.writeKey(ctx, names[0], req.User, rels[0]), wr.checked(ctx, strictest(ref, members), build))
	if err != nil {
		return api.WriteResponse{}, err
	}
	if c.replay != nil {
		return wr.replayed(ref, c), nil
	}
	res := api.WriteResponse{Path: rels[0], ETag: ETag(written[0]), Commit: c.commit, Branch: c.branch,
		Budget: wr.writeBudget(ref, c.tree, req.User, joinSlash(ref.ag.agent.Dir, rels[0]), written[0], times[0])}
	res.Team = &api.TeamWrite{Written: make([]api.AgentWrite, n)}
	for i := range members {
		res.Team.Written[i] = api.AgentWrite{Agent: names[i], Path: rels[i], ETag: ETag(written[i])}
	}
	return res, nil
}

// strictest is ref with the agent whose policy the validation of a team
// append follows: a member with the reject policy makes it check budgets
// (checked), as a write to that member alone would.
func strictest(ref agentRef, members []*prompt.Agent) agentRef {
	for _, m := range members {
		if m.Config.Policy == prompt.PolicyReject {
			ref.ag = ref.dep.agents[m.Name]
			break
		}
	}
	return ref
}

// teamMembers are the agents of a team append: ref's agent first, then
// each of names once. Each must be a deployed agent of ref's source whose
// agent.yaml names the same team.
func (wr *writer) teamMembers(ref agentRef, names []string) ([]*prompt.Agent, error) {
	lead := ref.ag.agent
	team := lead.Config.Team
	if team == "" {
		return nil, api.Errorf(api.CodeBadRequest, "agent %q is in no team (team: in its agent.yaml); only a team's members share a conversation", lead.Name)
	}
	members := []*prompt.Agent{lead}
	seen := map[string]bool{lead.Name: true}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		da, ok := ref.dep.agents[name]
		if !ok {
			if _, err := wr.sources.agent(name); err != nil {
				return nil, err
			}
			return nil, api.Errorf(api.CodeBadRequest, "agent %q is in another repository than %q: a team append is one commit in one repository", name, lead.Name)
		}
		if da.agent.Config.Team != team {
			return nil, api.Errorf(api.CodeBadRequest, "agent %q is not in team %q of agent %q (its agent.yaml says team: %q)", name, team, lead.Name, da.agent.Config.Team)
		}
		members = append(members, da.agent)
	}
	return members, nil
}
