package api

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// Review is implemented by a Backend that keeps a git history: the
// routes of the console's review pages (proposals, the agents' writes,
// deploys and what they changed, the templates). A Backend without it
// answers them 404 not_found.
type Review interface {
	Proposals(ctx context.Context, agent string) ([]Proposal, error)
	// Approve merges proposal id into main as a commit authored by the
	// person of ctx (PersonOf), validated as a push to main would be.
	Approve(ctx context.Context, agent, id string) (Approved, error)
	// Reject removes proposal id's branch and records who rejected it.
	Reject(ctx context.Context, agent, id string) error
	History(ctx context.Context, agent string, q HistoryQuery) ([]HistoryEntry, error)
	Deploys(ctx context.Context, agent string) ([]Deploy, error)
	PromptDiff(ctx context.Context, agent string, req PromptDiffRequest) (PromptDiff, error)
	// AllSkills lists every skill of the agent, those the request may not
	// use and those shadowed included, each with Allowed and ShadowedBy
	// (GET /v1/agents/{agent}/skills?all=true).
	AllSkills(ctx context.Context, agent, user string) (SkillsResponse, error)
	// Template returns the embedded template of path ("" and not_found
	// when there is none).
	Template(ctx context.Context, agent, path string) ([]byte, error)
}

// Proposal is an open persona proposal: a proposals/<agent>/<id> branch.
type Proposal struct {
	ID      string    `json:"id"`
	Branch  string    `json:"branch"`
	Message string    `json:"message"`
	Author  string    `json:"author"`
	User    string    `json:"user,omitempty"`
	Created time.Time `json:"created"`
	// Files are the paths the proposal changes, relative to the agent.
	Files []string `json:"files"`
	// Diff is the unified diff of the proposal against main.
	Diff string `json:"diff"`
}

// Approved is the answer of an approval: the commit on main.
type Approved struct {
	Commit string `json:"commit"`
}

// HistoryQuery selects the writes GET /v1/agents/{agent}/history lists.
type HistoryQuery struct {
	// Ref is "live" (the agents' writes, the default) or "main".
	Ref  string
	User string
	// File keeps the commits that change this path (relative to the
	// agent).
	File  string
	Limit int
	// Before starts the walk at this commit's first parent (paging).
	Before string
}

// HistoryEntry is one commit of an agent's history, as a diff.
type HistoryEntry struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent"`
	User    string    `json:"user,omitempty"`
	Message string    `json:"message"`
	Files   []string  `json:"files"`
	Diff    string    `json:"diff"`
}

// Deploy is one commit of main that changed the agent: what a push
// deployed.
type Deploy struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Subject string    `json:"subject"`
}

// PromptDiffRequest is the body of POST /v1/agents/{agent}/prompt/diff.
type PromptDiffRequest struct {
	From    string `json:"from"`
	To      string `json:"to"`
	User    string `json:"user,omitempty"`
	Channel string `json:"channel,omitempty"`
}

// PromptDiff is the prompt of each session kind at two commits.
type PromptDiff struct {
	Kinds []KindDiff `json:"kinds"`
}

// KindDiff is one session kind's prompt before and after, and their
// unified diff ("" when they are the same).
type KindDiff struct {
	Kind   string `json:"kind"`
	Before string `json:"before"`
	After  string `json:"after"`
	Diff   string `json:"diff"`
}

// StaleEdit is a console edit refused because the file changed since
// it was read: 412 with the current content and ETag beside the error,
// so the editor shows the other version and keeps what was typed.
type StaleEdit struct {
	Err     *Error
	Content string
	ETag    string
	// Deleted says the file no longer exists.
	Deleted bool
}

func (e *StaleEdit) Error() string { return e.Err.Error() }

// Unwrap lets AsError find the code.
func (e *StaleEdit) Unwrap() error { return e.Err }

// StaleEditBody is the body of a 412 answer to a stale console edit.
type StaleEditBody struct {
	Error   Error  `json:"error"`
	Content string `json:"content"`
	ETag    string `json:"etag,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

func (h *handler) review(r *http.Request) (Review, error) {
	rv, ok := h.b.(Review)
	if !ok {
		return nil, Errorf(CodeNotFound, "%s %s: this daemon keeps no git history to review", r.Method, r.URL.Path)
	}
	return rv, nil
}

func (h *handler) proposals(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	ps, err := rv.Proposals(r.Context(), r.PathValue("agent"))
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []Proposal{}
	}
	return reply(w, ps)
}

func (h *handler) approve(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	res, err := rv.Approve(r.Context(), r.PathValue("agent"), r.PathValue("id"))
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) reject(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	if err := rv.Reject(r.Context(), r.PathValue("agent"), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) history(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	hq := HistoryQuery{Ref: q.Get("ref"), User: q.Get("user"), File: q.Get("file"), Before: q.Get("before"), Limit: 50}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n <= 0 || n > 500 {
			return Errorf(CodeBadRequest, "limit %q: want a number from 1 to 500", l)
		}
		hq.Limit = n
	}
	if hq.Ref == "" {
		hq.Ref = "live"
	}
	if hq.Ref != "live" && hq.Ref != "main" {
		return Errorf(CodeBadRequest, "ref %q: want live or main", hq.Ref)
	}
	es, err := rv.History(r.Context(), r.PathValue("agent"), hq)
	if err != nil {
		return err
	}
	if es == nil {
		es = []HistoryEntry{}
	}
	return reply(w, es)
}

func (h *handler) deploys(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	ds, err := rv.Deploys(r.Context(), r.PathValue("agent"))
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []Deploy{}
	}
	return reply(w, ds)
}

func (h *handler) promptDiff(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	var req PromptDiffRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.From == "" || req.To == "" {
		return Errorf(CodeBadRequest, "from and to must name two commits (see GET /v1/agents/{agent}/deploys)")
	}
	res, err := rv.PromptDiff(r.Context(), r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) template(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	b, err := rv.Template(r.Context(), r.PathValue("agent"), r.PathValue("path"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
	return nil
}

func (h *handler) allSkills(w http.ResponseWriter, r *http.Request) error {
	rv, err := h.review(r)
	if err != nil {
		return err
	}
	res, err := rv.AllSkills(r.Context(), r.PathValue("agent"), r.URL.Query().Get("user"))
	if err != nil {
		return err
	}
	return reply(w, res)
}
