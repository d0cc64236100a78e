// Package api owns the daemon's local API (docs/api.md; its OpenAPI
// description openapi.json is served at GET /v1/openapi.json):
// the wire types, the one route table, the handlers that decode requests
// and encode answers, errors as {"error":{"code","message"}} with each
// code's HTTP status decided in one table (StatusOf), bearer tokens
// scoped to agents for TCP listeners, and the newline-delimited JSON event
// stream. What the routes do is the Backend's business: the daemon
// implements it.
package api

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/quirehq/quire/internal/xdg"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/prompt"
)

// Backend is what the routes call. Every method may return an *Error to
// choose the code (and through StatusOf the HTTP status); any other error
// answers 500.
type Backend interface {
	Status(ctx context.Context) Status
	Agents(ctx context.Context) []Agent
	// PromptJSON answers POST /v1/agents/{agent}/prompt with the
	// PromptResponse encoded by Encode, which the route sends as it is:
	// a rendered answer, not a typed one, so that a backend that keeps
	// its answers (see PromptAnswers) sends a repeated one without
	// encoding a prompt of many kilobytes again. body is req as it
	// arrived, read during the call only.
	PromptJSON(ctx context.Context, agent string, req PromptRequest, body []byte) ([]byte, error)
	MemorySearch(ctx context.Context, agent string, req SearchRequest) (SearchResponse, error)
	MemoryAppend(ctx context.Context, agent string, req AppendRequest) (WriteResponse, error)
	FlushPlan(ctx context.Context, agent string, req FlushPlanRequest) (FlushPlan, error)
	ReadFile(ctx context.Context, agent, user, path string) (File, error)
	// WriteFile writes path; ifMatch is the If-Match header (never empty:
	// the handler answers 428 first), "*" to create a file that must not exist yet.
	WriteFile(ctx context.Context, agent, user, path, ifMatch string, content []byte) (WriteResponse, error)
	// ListFiles lists the agent's files (user "") or a user's.
	ListFiles(ctx context.Context, agent, user string) (FileList, error)
	// DeleteFile deletes path under ifMatch (never empty; "*" for any
	// content), as WriteFile writes it.
	DeleteFile(ctx context.Context, agent, user, path, ifMatch string) (WriteResponse, error)
	SkillsSearch(ctx context.Context, agent string, req SkillsSearchRequest) (SkillsResponse, error)
	Skills(ctx context.Context, agent, user string) (SkillsResponse, error)
	Skill(ctx context.Context, agent, user, name string) (SkillBody, error)
	// Subscribe delivers events until ctx is done; the channel is closed
	// then.
	Subscribe(ctx context.Context) <-chan Event
	// WriteMetrics writes the Prometheus text exposition.
	WriteMetrics(w http.ResponseWriter)
}

// Status is the answer of GET /v1/status.
type Status struct {
	Version string        `json:"version"`
	Started time.Time     `json:"started"`
	Agents  []AgentStatus `json:"agents"`
	// Pushes is the last push to each hosted repository since the
	// daemon started: a client cut off before git's report finds here
	// whether its push was applied.
	Pushes []PushStatus `json:"pushes,omitempty"`
}

// PushStatus is the outcome of the last push to a hosted repository.
type PushStatus struct {
	Repo string    `json:"repo"`
	User string    `json:"user,omitempty"`
	At   time.Time `json:"at"`
	// Result is "ok" (every ref moved), "refused" or "partial".
	Result string `json:"result"`
	// Unpack is "ok" or why the pushed pack was refused.
	Unpack string      `json:"unpack"`
	Refs   []PushedRef `json:"refs"`
}

// PushedRef is one ref of a push: Old and New are commit ids ("" for
// none), Result is "ok" or why the ref was refused.
type PushedRef struct {
	Name   string `json:"name"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
	Result string `json:"result"`
}

// AgentStatus is one agent's deployment, in the manner of Flux or Argo CD.
type AgentStatus struct {
	Name string `json:"name"`
	// Source says where the agent comes from: "repo:<name>",
	// "upstream:<url>" or "dir:<path>".
	Source   string    `json:"source"`
	Deployed string    `json:"deployed_commit"`
	Indexed  string    `json:"indexed_commit"`
	DeployAt time.Time `json:"deployed_at"`
	// LagSeconds is how long the deployed commit has waited for its
	// index, or, for a followed upstream whose fetches or writes fail,
	// how long since it last answered; 0 when current.
	LagSeconds float64 `json:"lag_seconds"`
	LastError  string  `json:"last_error,omitempty"`
	// OpenProposals is how many persona proposals of the agent wait
	// for a person (proposals/<agent>/<n> branches).
	OpenProposals int `json:"open_proposals,omitempty"`
}

// Agent is one entry of GET /v1/agents.
type Agent struct {
	Name   string           `json:"name"`
	Type   prompt.AgentType `json:"type"`
	Source string           `json:"source"`
	Commit string           `json:"commit"`
}

// AgentsResponse is the answer of GET /v1/agents.
type AgentsResponse struct {
	Agents []Agent `json:"agents"`
}

// PromptRequest is the body of POST /v1/agents/{agent}/prompt.
type PromptRequest struct {
	User         string               `json:"user,omitempty"`
	Session      prompt.Session       `json:"session,omitempty"`
	Mode         prompt.Mode          `json:"mode,omitempty"` // full, task, minimal, none; "": the session's default
	Channel      prompt.Channel       `json:"channel,omitempty"`
	Room         string               `json:"room,omitempty"`
	Tools        []prompt.Tool        `json:"tools,omitempty"`
	Extra        string               `json:"extra,omitempty"`
	VirtualFiles []prompt.VirtualFile `json:"virtual_files,omitempty"`
	// Now is the caller's current time; absent means the daemon's clock.
	Now *time.Time `json:"now,omitempty"`
	// Skills, when present, replaces the agent.yaml allow list for this
	// request.
	Skills []string `json:"skills,omitempty"`
	// ContextWindow is the model's context window in tokens: when set,
	// the total budget becomes ContextShare of it (absent: agent.yaml's
	// budget.context_share, else 0.25), counted in tokens.
	ContextWindow int     `json:"context_window,omitempty"`
	ContextShare  float64 `json:"context_share,omitempty"`
}

// PromptAnswers is implemented by a Backend that keeps the answers
// PromptJSON gave: the route asks it before it decodes a request, so
// that a repeated request costs a lookup.
type PromptAnswers interface {
	// AnsweredPrompt returns the answer PromptJSON would give to body
	// (a request as it arrived) when the backend has it at hand, else
	// nil.
	AnsweredPrompt(agent string, body []byte) []byte
}

// PromptResponse is the answer of POST /v1/agents/{agent}/prompt.
type PromptResponse struct {
	Prompt string        `json:"prompt"`
	Report prompt.Report `json:"report"`
	Commit string        `json:"commit"`
}

// SearchRequest is the body of POST /v1/agents/{agent}/memory/search.
type SearchRequest struct {
	Query    string  `json:"query"`
	User     string  `json:"user,omitempty"`
	Limit    int     `json:"limit,omitempty"`
	MinScore float64 `json:"min_score,omitempty"`
	// TextWeight is the full-text side's weight in the hybrid score (0 to
	// 1); absent: the agent's memory_text_weight, else the default.
	TextWeight *float64 `json:"text_weight,omitempty"`
	// Context asks for that many neighbouring chunks on each side of
	// every hit (0 to memory.MaxContext), returned as the hit's context.
	Context int `json:"context,omitempty"`
	// Now is the time the query speaks from ("yesterday" is the day
	// before it); absent means the daemon's clock.
	Now *time.Time `json:"now,omitempty"`
}

// SearchResponse carries memory hits, best first.
type SearchResponse struct {
	Hits []memory.Hit `json:"hits"`
	// Commit is the indexed commit the hits come from.
	Commit string `json:"commit"`
}

// AppendRequest is the body of POST /v1/agents/{agent}/memory/append.
type AppendRequest struct {
	User string `json:"user,omitempty"`
	// Room is the room (group chat) the entry was written in; the entry
	// carries it, and the user, as "**Room:**" and "**User:**" lines.
	Room string `json:"room,omitempty"`
	Text string `json:"text"`
	// Agents, for a team conversation, names the other agents the entry
	// is also appended to: teammates of the route's agent (the same team:
	// in their agent.yaml, in the same repository), each in its own daily
	// log, all in one commit.
	Agents []string `json:"agents,omitempty"`
	// Now is the caller's current time; absent means the daemon's clock.
	Now *time.Time `json:"now,omitempty"`
}

// WriteResponse is the answer of an accepted write.
type WriteResponse struct {
	// Path is the written file, relative to the agent directory.
	Path string `json:"path"`
	// ETag is the new content's tag ("" when the write deleted the file).
	ETag    string `json:"etag,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
	// Commit is the commit that holds the write; Branch the branch it is
	// on (a proposals/<agent>/<n> branch for persona files).
	Commit string `json:"commit"`
	Branch string `json:"branch"`
	// Team is set for a team append (AppendRequest Agents): every
	// agent's file it wrote. A pointer keeps WriteResponse comparable.
	Team *TeamWrite `json:"team,omitempty"`
	// Budget is what the write did to the prompt: the file's status in
	// the private main session that shows it, after the write (for a
	// team append: the route's agent's log).
	Budget BudgetStatus `json:"budget,omitzero"`
}

// TeamWrite is what a team append wrote: each agent's file, the route's
// agent first.
type TeamWrite struct {
	Written []AgentWrite `json:"written"`
}

// AgentWrite is one agent's file of a write that reached several.
type AgentWrite struct {
	Agent string `json:"agent"`
	Path  string `json:"path"`
	ETag  string `json:"etag"`
}

// Budget statuses of a written file.
const (
	BudgetFits        = "fits"          // injected whole
	BudgetTruncated   = "truncated"     // injected with a cut (per-file or total budget)
	BudgetDropped     = "dropped"       // not injected: the total budget was used up
	BudgetNotInPrompt = "not_in_prompt" // not a file this session injects (or deleted)
)

// BudgetStatus is a written file's place in the prompt after the write.
type BudgetStatus struct {
	// Status is fits, truncated, dropped or not_in_prompt.
	Status string `json:"status"`
	// Chars is the file's length in chars; LimitChars the per-file
	// budget; InjectedChars what reaches the prompt.
	Chars         int `json:"chars"`
	LimitChars    int `json:"limit_chars"`
	InjectedChars int `json:"injected_chars"`
	// Unit is "tokens" for an agent whose budget is in tokens; Tokens,
	// LimitTokens and InjectedTokens are then the same figures in tokens.
	Unit           string `json:"unit,omitempty"`
	Tokens         int    `json:"tokens,omitempty"`
	LimitTokens    int    `json:"limit_tokens,omitempty"`
	InjectedTokens int    `json:"injected_tokens,omitempty"`
	// Cut says what is cut (truncated, dropped): the lines and chars.
	Cut string `json:"cut,omitempty"`
	// Warning is set when the file is at 80 % of its budget or more
	// (what quire check and the push report say).
	Warning string `json:"warning,omitempty"`
}

// File is the answer of GET /v1/agents/{agent}/files/{path}.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	ETag    string `json:"etag"`
	Commit  string `json:"commit"`
}

// FlushPlanRequest is the body of POST /v1/agents/{agent}/memory/flush-plan.
type FlushPlanRequest struct {
	User          string `json:"user,omitempty"`
	TotalTokens   int    `json:"total_tokens"`
	ContextWindow int    `json:"context_window"`
	// Cycle numbers the session's compaction cycles; a flush is planned
	// at most once per cycle.
	Cycle int `json:"cycle"`
	// Session names the conversation; cycles are counted per session.
	Session string `json:"session,omitempty"`
}

// FlushPlan says whether to flush memory before compaction.
type FlushPlan struct {
	Flush          bool   `json:"flush"`
	ThresholdToken int    `json:"threshold_tokens"`
	Prompt         string `json:"prompt,omitempty"`
	Target         string `json:"target,omitempty"`
	Reason         string `json:"reason"`
}

// SkillsSearchRequest is the body of POST /v1/agents/{agent}/skills/search.
type SkillsSearchRequest struct {
	Query string `json:"query"`
	User  string `json:"user,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// SkillEntry is one skill in a list or search answer.
type SkillEntry struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Tier        string  `json:"tier"`
	Location    string  `json:"location"`
	Score       float64 `json:"score,omitempty"`
	// Source is the SKILL.md the skill comes from.
	Source string `json:"source,omitempty"`
	// ShadowedBy, in a list with all=true, is the SKILL.md in effect
	// that hides this one (a skill of the same name on a higher tier).
	ShadowedBy string `json:"shadowed_by,omitempty"`
	// Allowed, in a list with all=true, says whether the request may use
	// the skill (its allow list and access rules).
	Allowed *bool `json:"allowed,omitempty"`
}

// SkillsResponse lists skills.
type SkillsResponse struct {
	Skills []SkillEntry `json:"skills"`
}

// SkillBody is the answer of GET /v1/agents/{agent}/skills/{name}.
type SkillBody struct {
	SkillEntry
	// Body is the SKILL.md body with {baseDir} resolved.
	Body string `json:"body"`
}

// Event is one line of GET /v1/events.
type Event struct {
	// Type is "deploy", "index", "write", "prune" (daily logs past
	// their retention deleted), "proposal" (a person approved or
	// rejected one) or "error".
	Type   string    `json:"type"`
	Time   time.Time `json:"time"`
	Agent  string    `json:"agent,omitempty"`
	Source string    `json:"source,omitempty"`
	Commit string    `json:"commit,omitempty"`
	Path   string    `json:"path,omitempty"`
	User   string    `json:"user,omitempty"`
	// Chunks is, for an index event, how many chunks this daemon wrote
	// (0 when another daemon sharing the database had indexed the
	// commit already).
	Chunks int `json:"chunks,omitempty"`
	// Message says what happened in a sentence.
	Message string `json:"message,omitempty"`
}

// DefaultSocket returns the local API's default unix socket:
// $XDG_RUNTIME_DIR/quire/quire.sock, or quire-<uid>/quire.sock under the
// temporary directory when XDG_RUNTIME_DIR is not set.
func DefaultSocket(getenv func(string) string) string {
	return filepath.Join(xdg.RuntimeDir(getenv), "quire.sock")
}
