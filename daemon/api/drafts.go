package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// Drafts is implemented by a Backend that can ask a model (quire serve
// --llm-url): summoning an agent and consolidating an agent's memory.
// What the model writes is opened as a proposal branch; it reaches main
// (and live) only when a person merges it. A Backend without it answers
// these routes 501 no_model.
type Drafts interface {
	// Summon asks the model for a new agent called agent and proposes
	// its files.
	Summon(ctx context.Context, agent string, req SummonRequest) (ProposalResponse, error)
	// Consolidate asks the model for agent's MEMORY.md with its recent
	// daily logs distilled into it, and proposes it.
	Consolidate(ctx context.Context, agent string, req ConsolidateRequest) (ProposalResponse, error)
}

// SummonRequest is the body of POST /v1/agents/{agent}/summon.
type SummonRequest struct {
	// Description says in plain words what the new agent should be.
	Description string `json:"description"`
	// Repo is the hosted repository the agent goes to (its name); it may
	// be left out when the daemon hosts one.
	Repo string `json:"repo,omitempty"`
	// Dir is the directory of the repository the agent's directory goes
	// in (default: beside the repository's agents).
	Dir string `json:"dir,omitempty"`
}

// ConsolidateRequest is the body of POST /v1/agents/{agent}/consolidate.
type ConsolidateRequest struct {
	// Days of daily logs to read, today included (default: agent.yaml's
	// consolidate.days, else 7).
	Days int `json:"days,omitempty"`
}

// ProposalResponse is the answer of a summoning or a consolidation: the
// proposal branch a person merges (or deletes).
type ProposalResponse struct {
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	// Files are the paths the proposal writes, in the repository.
	Files []string `json:"files"`
	// Warnings are what the checks found short of an error.
	Warnings []workspace.Problem `json:"warnings,omitempty"`
	// Model is the model that wrote the proposal.
	Model string `json:"model"`
}

func (h *handler) drafts() (Drafts, error) {
	if d, ok := h.b.(Drafts); ok {
		return d, nil
	}
	return nil, Errorf(CodeNoModel, "this daemon asks no model: start it with --llm-url and --llm-model")
}

func (h *handler) summon(w http.ResponseWriter, r *http.Request) error {
	d, err := h.drafts()
	if err != nil {
		return err
	}
	var req SummonRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Description) == "" {
		return Errorf(CodeBadRequest, "description is empty: say what the agent should be")
	}
	res, err := d.Summon(r.Context(), r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) consolidate(w http.ResponseWriter, r *http.Request) error {
	d, err := h.drafts()
	if err != nil {
		return err
	}
	var req ConsolidateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Days < 0 {
		return Errorf(CodeBadRequest, "days must be positive (or left out)")
	}
	res, err := d.Consolidate(r.Context(), r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}
