package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/mcp"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// reader answers the API's reads from the current deployments and the
// store: status, agents, prompts (cached per deployment), memory search,
// flush plans, files, skills, events and metrics. A read never writes: a
// new user's seed files are served virtually (seedFS) until the first
// write for that user commits them.
type reader struct {
	sources *sourceSet
	store   memory.Store
	events  *broker
	metrics *metrics
	version string
	started time.Time
	now     func() time.Time
	// skillSearch ranks skills: hybrid with an embedder, else BM25.
	skillSearch *skillSearch

	flushMu sync.Mutex
	flushed map[string]int // agent/user/session → last flushed cycle + 1
}

// backend is the local API's api.Backend (and MCP's, through mcp.Local):
// the reader's reads, the prompter's prompts and the writer's writes.
type backend struct {
	*reader
	*prompter
	*writer
	*reviewer
}

var (
	_ mcp.LocalBackend  = backend{}
	_ api.PromptAnswers = backend{}
	_ api.Review        = backend{}
)

// FlushPrompt is what the model is told when the flush plan says flush.
const FlushPrompt = "Store durable memories now."

// Flush thresholds of behavior.md §6: flush when the session's tokens
// reach the context window minus the reserve and the flush's own room.
const (
	FlushReserveTokens = 20000
	FlushPromptTokens  = 4000
)

// Status implements api.Backend.
func (rd *reader) Status(ctx context.Context) api.Status {
	st := api.Status{Version: rd.version, Started: rd.started, Agents: []api.AgentStatus{}}
	now := rd.now()
	var damaged []api.AgentStatus // agents damage hides, repositories' faults
	for _, s := range rd.sources.all() {
		agents, hidden := sourceStatus(s, now)
		counts := proposalCounts(s)
		for i := range agents {
			agents[i].OpenProposals = counts[agents[i].Name]
		}
		st.Agents = append(st.Agents, agents...)
		damaged = append(damaged, hidden...)
	}
	st.Agents = append(st.Agents, damaged...)
	if rd.sources.host != nil {
		for _, p := range rd.sources.host.LastPushes() {
			ps := api.PushStatus{Repo: p.Repo, User: p.User, At: p.At, Result: p.Result, Unpack: p.Unpack}
			for _, r := range p.Refs {
				ps.Refs = append(ps.Refs, api.PushedRef{Name: r.Name, Old: r.Old, New: r.New, Result: r.Result})
			}
			st.Pushes = append(st.Pushes, ps)
		}
	}
	return st
}

// sourceStatus is the status of s's agents, from what its parts say:
// the deployer (the deployed revision, the last deploy's error), the
// upstream (whether it answers) and the indexer (what the store holds).
// hidden are the entries damage to s's repository makes, listed after
// every source's agents.
func sourceStatus(s *source, now time.Time) (agents, hidden []api.AgentStatus) {
	dep := s.deploys.current()
	notes, hidden, repoDamage := damageStatus(s, dep)
	lastErr := s.deploys.lastError()
	upErrs, lag := s.up.health()
	for _, e := range upErrs {
		// A stuck upstream: prompts are served from the last good
		// commit meanwhile.
		if lastErr != "" {
			lastErr += "; "
		}
		lastErr += "upstream: " + e
	}
	if dep == nil {
		if e := joinErrors(lastErr, repoDamage); e != "" {
			agents = append(agents, api.AgentStatus{Source: s.id(), LastError: e})
		}
		return agents, hidden
	}
	if repoDamage != "" {
		hidden = append(hidden, api.AgentStatus{Source: s.id(), LastError: repoDamage})
	}
	for _, name := range dep.names {
		ix := s.index.agent(name)
		a := api.AgentStatus{Name: name, Source: s.id(), Deployed: dep.commit, DeployAt: dep.at, Indexed: ix.commit}
		if ix.waiting && a.Indexed != a.Deployed {
			a.LagSeconds = now.Sub(ix.since).Seconds()
		}
		a.LagSeconds = max(a.LagSeconds, lag.Seconds())
		a.LastError = lastErr
		if ix.err != "" {
			a.LastError = "index: " + ix.err
		}
		if ix.notIndexed != "" {
			if a.LastError != "" {
				a.LastError += "; "
			}
			a.LastError += "index: " + ix.notIndexed
		}
		a.LastError = joinErrors(a.LastError, notes[name])
		agents = append(agents, a)
	}
	return agents, hidden
}

// Agents implements api.Backend.
func (rd *reader) Agents(ctx context.Context) []api.Agent {
	var out []api.Agent
	for _, r := range rd.sources.agentRefs() {
		out = append(out, api.Agent{Name: r.ag.agent.Name, Type: r.ag.agent.Config.Type, Source: r.src.id(), Commit: r.dep.commit})
	}
	return out
}

func badRequest(format string, args ...any) *api.Error {
	return api.Errorf(api.CodeBadRequest, format, args...)
}

// MemorySearch implements api.Backend. A store that does not answer is a
// 503: prompts are still served.
func (rd *reader) MemorySearch(ctx context.Context, agent string, req api.SearchRequest) (api.SearchResponse, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.SearchResponse{}, err
	}
	if req.User != "" {
		if _, err := workspace.EncodeID(req.User); err != nil {
			return api.SearchResponse{}, badRequest("user %q: %v", req.User, err)
		}
	}
	if req.Limit < 0 || req.Limit > 100 {
		return api.SearchResponse{}, badRequest("limit %d: use 1 to 100 (0 means %d)", req.Limit, memory.DefaultLimit)
	}
	weight := req.TextWeight
	if weight == nil {
		weight = ref.ag.agent.Config.MemoryTextWeight
	} else if !(*weight >= 0 && *weight <= 1) {
		return api.SearchResponse{}, badRequest("text_weight %g: use 0 (vectors only) to 1 (full text only)", *weight)
	}
	if req.Context < 0 || req.Context > memory.MaxContext {
		return api.SearchResponse{}, badRequest("context %d: use 0 to %d neighbouring chunks on each side of a hit", req.Context, memory.MaxContext)
	}
	q := memory.Query{Text: req.Query, User: req.User, Limit: req.Limit, MinScore: req.MinScore, TextWeight: weight, Context: req.Context}
	if req.Now != nil {
		q.Now = *req.Now
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hits, err := rd.store.Search(sctx, agent, q)
	if err != nil {
		if ctx.Err() != nil {
			return api.SearchResponse{}, ctx.Err()
		}
		return api.SearchResponse{}, api.Errorf(api.CodeStoreUnavailable,
			"memory search is unavailable: the memory store does not answer (%v); prompts are still served and the index catches up when it is back", err)
	}
	if hits == nil {
		hits = []memory.Hit{}
	}
	return api.SearchResponse{Hits: hits, Commit: ref.src.index.agent(agent).commit}, nil
}

// FlushPlan implements api.Backend (behavior.md §6).
func (rd *reader) FlushPlan(ctx context.Context, agent string, req api.FlushPlanRequest) (api.FlushPlan, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.FlushPlan{}, err
	}
	scope := ""
	if req.User != "" {
		if scope, err = ref.ag.agent.UserDir(req.User); err != nil {
			return api.FlushPlan{}, badRequest("user %q: %v", req.User, err)
		}
		scope = relTo(ref.ag.agent.Dir, scope)
	}
	threshold := req.ContextWindow - FlushReserveTokens - FlushPromptTokens
	plan := api.FlushPlan{ThresholdToken: threshold}
	if req.TotalTokens < threshold {
		plan.Reason = fmt.Sprintf("%d tokens are below the flush threshold of %d", req.TotalTokens, threshold)
		return plan, nil
	}
	key := agent + "\x00" + req.User + "\x00" + req.Session
	rd.flushMu.Lock()
	defer rd.flushMu.Unlock()
	if rd.flushed[key] == req.Cycle+1 {
		plan.Reason = fmt.Sprintf("already flushed in compaction cycle %d", req.Cycle)
		return plan, nil
	}
	if len(rd.flushed) > 100000 {
		clear(rd.flushed)
	}
	rd.flushed[key] = req.Cycle + 1
	plan.Flush = true
	plan.Prompt = FlushPrompt
	plan.Target = path.Join(scope, dailyLogPath(rd.now(), ref.ag.agent.Config.Location))
	plan.Reason = fmt.Sprintf("%d tokens reach the flush threshold of %d", req.TotalTokens, threshold)
	return plan, nil
}

func relTo(base, p string) string {
	if base == "." {
		return p
	}
	return p[len(base)+1:]
}

func skillEntry(s *skills.Skill, score float64) api.SkillEntry {
	return api.SkillEntry{Name: s.Slug, Description: s.Description, Tier: s.Tier.String(), Location: s.Location, Score: score, Source: s.Path}
}

func (rd *reader) skillsRequest(ref agentRef, user string) (skills.Request, error) {
	if user != "" {
		if _, err := workspace.EncodeID(user); err != nil {
			return skills.Request{}, badRequest("user %q: %v", user, err)
		}
	}
	return ref.ag.userRequest(user), nil
}

// SkillsSearch implements api.Backend.
func (rd *reader) SkillsSearch(ctx context.Context, agent string, req api.SkillsSearchRequest) (api.SkillsResponse, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	sreq, err := rd.skillsRequest(ref, req.User)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	hits, err := rd.skillSearch.search(ctx, ref.ag.skills, req.Query, sreq, req.Limit)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	out := api.SkillsResponse{Skills: []api.SkillEntry{}}
	for _, h := range hits {
		out.Skills = append(out.Skills, skillEntry(h.Skill, h.Score))
	}
	return out, nil
}

// Skills implements api.Backend.
func (rd *reader) Skills(ctx context.Context, agent, user string) (api.SkillsResponse, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	sreq, err := rd.skillsRequest(ref, user)
	if err != nil {
		return api.SkillsResponse{}, err
	}
	out := api.SkillsResponse{Skills: []api.SkillEntry{}}
	for _, s := range ref.ag.skills.List(sreq) {
		out.Skills = append(out.Skills, skillEntry(s, 0))
	}
	return out, nil
}

// Skill implements api.Backend.
func (rd *reader) Skill(ctx context.Context, agent, user, name string) (api.SkillBody, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.SkillBody{}, err
	}
	sreq, err := rd.skillsRequest(ref, user)
	if err != nil {
		return api.SkillBody{}, err
	}
	s, ok := ref.ag.skills.Show(sreq, name)
	if !ok {
		return api.SkillBody{}, api.Errorf(api.CodeUnknownSkill, "agent %q has no skill %q that this request may see", agent, name)
	}
	return api.SkillBody{SkillEntry: skillEntry(s, 0), Body: s.ResolvedBody()}, nil
}

// Subscribe implements api.Backend.
func (rd *reader) Subscribe(ctx context.Context) <-chan api.Event { return rd.events.subscribe(ctx) }

// WriteMetrics implements api.Backend.
func (rd *reader) WriteMetrics(w http.ResponseWriter) { rd.metrics.write(w) }

// ReadFile implements api.Backend.
func (rd *reader) ReadFile(ctx context.Context, agent, user, p string) (api.File, error) {
	ref, err := rd.sources.agent(agent)
	if err != nil {
		return api.File{}, err
	}
	rel, err := cleanPath(p)
	if err != nil {
		return api.File{}, err
	}
	if workspace.IsVirtualFile(rel) {
		return api.File{}, api.Errorf(api.CodeVirtualFile, "%s is a virtual file: built from agent.yaml or supplied by the caller, it is already in the system prompt", rel)
	}
	sc, err := scope(user)
	if err != nil {
		return api.File{}, err
	}
	full := joinSlash(ref.ag.agent.Dir, sc, rel)
	b, err := fs.ReadFile(ref.dep.fsys, full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return api.File{}, api.Errorf(api.CodeNotFound, "agent %q has no file %s", agent, joinSlash(sc, rel))
		}
		return api.File{}, api.Errorf(api.CodeBadPath, "read %s: %v", joinSlash(sc, rel), err)
	}
	return api.File{Path: joinSlash(sc, rel), Content: string(b), ETag: ETag(b), Commit: ref.dep.commit}, nil
}
