package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/llm/draft"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// Summon implements api.Drafts: it asks the model (Options.LLM) for a new
// agent's files, checks them on main's tree and commits them to a new
// proposals/<agent>/<n> branch of a hosted repository. Nothing reaches
// main or live until a person merges the branch.
func (wr *writer) Summon(ctx context.Context, name string, req api.SummonRequest) (api.ProposalResponse, error) {
	if wr.llm == nil {
		return api.ProposalResponse{}, noModel()
	}
	if err := draft.CheckName(name); err != nil {
		return api.ProposalResponse{}, api.Errorf(api.CodeBadRequest, "%v", err)
	}
	if ref, err := wr.sources.agent(name); err == nil {
		return api.ProposalResponse{}, api.Errorf(api.CodeExists, "agent %q is deployed from %s; choose another name", name, ref.src.id())
	}
	s, err := wr.summonSource(req.Repo)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	head, err := s.repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return api.ProposalResponse{}, fmt.Errorf("resolve main of %s: %w", s.id(), err)
	}
	snap, err := s.repo.SnapshotOf(head)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	d, err := draft.Summon(ctx, wr.llm, snap, draft.SummonRequest{Name: name, Description: req.Description, Dir: req.Dir})
	if err != nil {
		return api.ProposalResponse{}, draftError(err)
	}
	ref := agentRef{src: s, ag: &deployedAgent{agent: &prompt.Agent{Name: name, Dir: d.Dir}}}
	return wr.proposeDraft(ctx, ref, d, fmt.Sprintf("%s: summoned by %s", name, wr.llm.Model()), true)
}

// Consolidate implements api.Drafts: it asks the model for the agent's
// MEMORY.md with its recent daily logs (as deployed) distilled into it
// and commits it to a new proposals/<agent>/<n> branch.
func (wr *writer) Consolidate(ctx context.Context, name string, req api.ConsolidateRequest) (api.ProposalResponse, error) {
	if wr.llm == nil {
		return api.ProposalResponse{}, noModel()
	}
	ref, err := wr.sources.agent(name)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	return wr.consolidate(ctx, ref, req.Days)
}

func (wr *writer) consolidate(ctx context.Context, ref agentRef, days int) (api.ProposalResponse, error) {
	a := ref.ag.agent
	if ref.src.kind != kindRepo {
		return api.ProposalResponse{}, api.Errorf(api.CodeNotWritable,
			"agent %q is served from %s: a consolidation is a proposal branch, which needs a hosted repository (--repos); `quire consolidate --dir` makes one in a local checkout", a.Name, ref.src.id())
	}
	if days <= 0 && a.Config.Consolidate != nil {
		days = a.Config.Consolidate.Days
	}
	loc := a.Config.Location
	if loc == nil {
		loc = time.UTC
	}
	d, err := draft.Consolidate(ctx, wr.llm, ref.dep.base, draft.ConsolidateRequest{Agent: a, Days: days, Today: wr.now().In(loc)})
	if err != nil {
		return api.ProposalResponse{}, draftError(err)
	}
	d.Warnings = append(d.Warnings, wr.liveDiffers(ref, d)...)
	return wr.proposeDraft(ctx, ref, d, fmt.Sprintf("%s%s, by %s", a.Name, consolidateMessage, wr.llm.Model()), false)
}

// liveDiffers warns when a file of d is not on main as it is on live
// (the agent wrote to it): the proposal starts at main but holds live's
// changes too, so its merge may conflict with live.
func (wr *writer) liveDiffers(ref agentRef, d *draft.Draft) []workspace.Problem {
	head, err := ref.src.repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return nil
	}
	snap, err := ref.src.repo.SnapshotOf(head)
	if err != nil {
		return nil
	}
	var out []workspace.Problem
	for _, p := range d.Paths() {
		onMain, _ := fs.ReadFile(snap, p)
		onLive, _ := fs.ReadFile(ref.dep.base, p)
		if !bytes.Equal(onMain, onLive) {
			out = append(out, workspace.Problem{Path: p, Severity: workspace.SeverityWarning, Code: "live-differs",
				Message: "live's copy (which the model read) differs from main's: the proposal holds the agent's changes too, and merging it may conflict with live; if a push is refused, git pull --no-rebase the live branch first"})
		}
	}
	return out
}

// proposeDraft commits d's files to a new proposal branch from main.
// create refuses a file main has (a new agent's directory that someone
// pushed meanwhile).
func (wr *writer) proposeDraft(ctx context.Context, ref agentRef, d *draft.Draft, msg string, create bool) (api.ProposalResponse, error) {
	build := func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		var writes []gitsync.FileWrite
		for _, p := range d.Paths() {
			if _, err := fs.Stat(fsys, p); err == nil && create {
				return nil, api.Errorf(api.CodeExists, "%s exists on main now; choose another name", p)
			}
			writes = append(writes, gitsync.FileWrite{Path: p, Content: d.Files[p]})
		}
		return writes, nil
	}
	c, err := wr.propose(ctx, ref, "", msg, gitsync.WriteKey{}, build)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	res := api.ProposalResponse{Branch: c.branch, Commit: c.commit, Files: d.Paths(), Warnings: d.Warnings, Model: wr.llm.Model()}
	wr.log.Info("proposed what a model wrote", "agent", ref.ag.agent.Name, "branch", c.branch, "commit", c.commit,
		"files", res.Files, "model", res.Model, "endpoint", wr.llm.Endpoint())
	wr.events.publish(api.Event{Type: "write", Agent: ref.ag.agent.Name, Source: ref.src.id(), Commit: c.commit,
		Message: "proposed on " + c.branch + " (written by " + res.Model + "): " + strings.Join(res.Files, ", ")})
	return res, nil
}

// summonSource is the hosted repository a new agent goes to: repo, or
// the only one the daemon hosts.
func (wr *writer) summonSource(repo string) (*source, error) {
	var hosted []*source
	var names []string
	for _, s := range wr.sources.all() {
		if s.kind != kindRepo {
			continue
		}
		if s.name == repo {
			return s, nil
		}
		hosted = append(hosted, s)
		names = append(names, s.name)
	}
	switch {
	case repo != "":
		return nil, api.Errorf(api.CodeNotFound, "no hosted repository %q; the daemon hosts: %s", repo, strings.Join(names, ", "))
	case len(hosted) == 1:
		return hosted[0], nil
	case len(hosted) == 0:
		return nil, api.Errorf(api.CodeNotWritable, "a summoned agent is a proposal branch, which needs a hosted repository (quire serve --repos); `quire summon --dir` makes one in a local checkout")
	}
	return nil, api.Errorf(api.CodeBadRequest, "the daemon hosts several repositories: name one in repo (%s)", strings.Join(names, ", "))
}

func noModel() error {
	return api.Errorf(api.CodeNoModel, "this daemon asks no model: start it with --llm-url and --llm-model (and a key in --llm-key-file, QUIRE_LLM_KEY or OPENAI_API_KEY when the endpoint needs one)")
}

// draftError gives a draft's error its API code.
func draftError(err error) error {
	var inv *draft.InvalidError
	switch {
	case errors.As(err, &inv):
		return api.Errorf(api.CodeInvalid, "%v", err)
	case errors.Is(err, draft.ErrExists):
		return api.Errorf(api.CodeExists, "%v", err)
	case errors.Is(err, draft.ErrRootAgent):
		return api.Errorf(api.CodeNotWritable, "%v", err)
	case errors.Is(err, draft.ErrNothingToConsolidate):
		return api.Errorf(api.CodeNoChange, "%v", err)
	case errors.Is(err, draft.ErrModel):
		return api.Errorf(api.CodeModelFailed, "%v", err)
	}
	return api.Errorf(api.CodeBadRequest, "%v", err)
}
