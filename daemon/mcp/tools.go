package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// MaxGetBytes caps the text one memory_get returns; a longer window ends
// early with truncated set and next_from saying where to go on.
const MaxGetBytes = 16 << 10

// MaxLimit bounds the limit of memory_search and skill_search.
const MaxLimit = 50

// Scopes of a file argument.
const (
	scopeAgent = "agent"
	scopeUser  = "user"
)

type searchIn struct {
	Query    string  `json:"query" jsonschema:"what to look for, in natural language; hits need not contain every word"`
	Limit    int     `json:"limit,omitempty" jsonschema:"how many hits to return (default 6)"`
	MinScore float64 `json:"min_score,omitempty" jsonschema:"drop hits scoring below this (scores are 0 to about 1.2)"`
	Context  int     `json:"context,omitempty" jsonschema:"also return this many neighbouring chunks of the file on each side of every hit (0 to 3), as the hit's context: read them when an answer may run past the hit"`
}

// searchHit is one memory hit as tools return it.
type searchHit struct {
	Path      string  `json:"path"`
	Scope     string  `json:"scope"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Date      string  `json:"date,omitempty"`
	Score     float64 `json:"score"`
	// TextScore and VectorScore are the parts of Score of the
	// full-text and the vector side (memory.Hit).
	TextScore   float64 `json:"text_score"`
	VectorScore float64 `json:"vector_score"`
	Text        string  `json:"text"`
	// Context is text around the hit that is not the hit.
	Context []memory.Context `json:"context,omitempty"`
}

type searchOut struct {
	Hits   []searchHit `json:"hits"`
	Commit string      `json:"commit"`
}

type getIn struct {
	Path  string `json:"path" jsonschema:"a memory file: MEMORY.md or memory/....md (the path of a memory_search hit)"`
	From  int    `json:"from,omitempty" jsonschema:"first line to return, counting from 1 (default 1)"`
	Lines int    `json:"lines,omitempty" jsonschema:"how many lines to return (default: to the end of the file)"`
	Scope string `json:"scope,omitempty" jsonschema:"whose file: user (this session's user's own copy; the default when the session has a user) or agent (the agent's shared copy; the default otherwise). memory_get and memory_write default alike; a memory_search hit says its scope"`
}

type getOut struct {
	Path       string `json:"path"`
	Scope      string `json:"scope"`
	From       int    `json:"from"`
	To         int    `json:"to"`
	TotalLines int    `json:"total_lines"`
	Text       string `json:"text"`
	ETag       string `json:"etag"`
	Truncated  bool   `json:"truncated,omitempty"`
	NextFrom   int    `json:"next_from,omitempty"`
}

type appendIn struct {
	Text           string   `json:"text" jsonschema:"the memory to record, in Markdown; it becomes a timestamped entry of today's daily log"`
	Agents         []string `json:"agents,omitempty" jsonschema:"optional, for a team conversation: teammates of this agent (same team in agent.yaml) whose daily logs get the same entry, in the same commit"`
	Room           string   `json:"room,omitempty" jsonschema:"optional: the room (group chat) this was said in; the entry names it, and the user"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"optional: a key naming this write (up to 255 printable ASCII characters, e.g. a UUID); retrying with the same key after an error or a timeout never records it twice"`
}

type writeIn struct {
	Path    string `json:"path" jsonschema:"file to write: MEMORY.md, memory/....md (not a daily log memory/YYYY-MM-DD.md: those are append-only, use memory_append), or the user's USER.md or BOOTSTRAP.md; AGENTS.md, SOUL.md, IDENTITY.md and TOOLS.md become a proposal for a person to review"`
	Content string `json:"content" jsonschema:"the whole new content of the file (writing BOOTSTRAP.md empty deletes it)"`
	IfMatch string `json:"if_match" jsonschema:"the etag memory_get (or the last write, or the resource's _meta) returned for this file in the same scope, or * to create a file that does not exist yet; an etag the file no longer has is refused with code stale, * on a file that exists with code exists"`
	Scope   string `json:"scope,omitempty" jsonschema:"whose file: user (this session's user's own copy; the default when the session has a user) or agent (the agent's shared copy; the default otherwise). memory_get and memory_write default alike; pass the scope memory_get returned"`
	// IdempotencyKey is the API's Idempotency-Key header.
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional: a key naming this write (up to 255 printable ASCII characters, e.g. a UUID); retrying with the same key after an error or a timeout never applies it twice"`
}

type skillSearchIn struct {
	Query string `json:"query" jsonschema:"the task you need instructions for"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many skills to return (default 5)"`
}

type skillGetIn struct {
	Name string `json:"name" jsonschema:"the skill's name, as skill_search lists it"`
}

// The tools' arguments, derived once for every server.
var (
	searchArgs      = argsOf[searchIn]()
	getArgs         = argsOf[getIn]()
	appendArgs      = argsOf[appendIn]()
	writeArgs       = argsOf[writeIn]()
	skillSearchArgs = argsOf[skillSearchIn]()
	skillGetArgs    = argsOf[skillGetIn]()
)

// addTool adds t, whose arguments a describes, answered by fn: its
// answer becomes the tool's JSON text, its error a tool error with the
// API's error body. The SDK's typed AddTool would do the same with two
// more decodings of the arguments (each with a 32 KiB buffer) a call.
func addTool[T any](s *server, t *sdk.Tool, a args[T], fn func(ctx context.Context, in T) (any, error)) {
	t.InputSchema = a.schema
	s.srv.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		in, err := a.decode(req.Params.Arguments)
		if err != nil {
			return toolErr(ctx, err)
		}
		if req.Extra != nil && req.Extra.Header != nil {
			ctx = context.WithValue(ctx, headerKey{}, req.Extra.Header)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return toolErr(ctx, err)
		}
		return result(out)
	})
}

func (s *server) addTools() {
	a := s.id.Agent
	addTool(s, &sdk.Tool{
		Name:  "memory_search",
		Title: "Search memory",
		Description: "Search agent " + a + "'s long-term memory (MEMORY.md and the daily logs) by meaning and keywords. " +
			"Use it before answering anything about earlier conversations, people, preferences, dates or decisions. " +
			"Returns the best hits first, each with path, scope, start_line and end_line, date (for daily logs), score with its text_score and vector_score parts, and text; read more around a hit with memory_get.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, searchArgs, s.memorySearch)
	addTool(s, &sdk.Tool{
		Name:  "memory_get",
		Title: "Read memory",
		Description: "Read lines of one of agent " + a + "'s memory files (MEMORY.md, memory/YYYY-MM-DD.md, memory/....md), e.g. around a memory_search hit. " +
			fmt.Sprintf("At most %d bytes come back at once: when truncated is true, call again with from set to next_from. ", MaxGetBytes) +
			"The etag and scope it returns are what memory_write needs as if_match and scope.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, getArgs, s.memoryGet)
	addTool(s, &sdk.Tool{
		Name:  "memory_append",
		Title: "Remember",
		Description: "Record something worth remembering (a fact, a preference, a decision, a follow-up) as a timestamped entry in today's daily log of agent " + a + ". " +
			"Nothing is overwritten; text over the agent's write limit is refused, never cut.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(false)},
	}, appendArgs, s.memoryAppend)
	addTool(s, &sdk.Tool{
		Name:  "memory_write",
		Title: "Write a memory file",
		Description: "Replace the whole content of one of agent " + a + "'s memory files (or the user's USER.md / BOOTSTRAP.md). " +
			"Read the file with memory_get first and pass the etag and scope it returned as if_match and scope; if_match * creates a file that does not exist yet (refused with code exists when it does). " +
			"A write that would overwrite someone else's change is refused with code stale: read the file again and redo the change. " +
			"Persona files (AGENTS.md, SOUL.md, IDENTITY.md, TOOLS.md) are not changed: the write becomes a proposal branch for a person to review. " +
			"Content over the agent's write limit is refused, never cut. Daily logs are append-only: use memory_append for new facts. " +
			"The answer's budget says what the write did to the prompt (fits, truncated with what is cut, dropped).",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true},
	}, writeArgs, s.memoryWrite)
	addTool(s, &sdk.Tool{
		Name:  "skill_search",
		Title: "Find a skill",
		Description: "Find the skills of agent " + a + " that fit a task (best first, with name, description and score). " +
			"Load the instructions of the one that fits with skill_get before doing the task.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, skillSearchArgs, s.skillSearch)
	addTool(s, &sdk.Tool{
		Name:  "skill_get",
		Title: "Load a skill",
		Description: "Load one skill's instructions (the body of its SKILL.md, with {baseDir} replaced by the skill's directory) for agent " + a + ". " +
			"Follow them for the task at hand.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, skillGetArgs, s.skillGet)
}

// result is a successful tool answer: v as JSON text. The text is
// encoded once into the string it becomes (json.Marshal would copy it
// twice more) and without HTML escaping, like the SDK's own encoding.
func result(v any) (*sdk.CallToolResult, error) {
	var text strings.Builder
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	t := strings.TrimSuffix(text.String(), "\n")
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: t}}}, nil
}

// toolErr is toolError, with the error's status noted for Observe.
func toolErr(ctx context.Context, err error) (*sdk.CallToolResult, error) {
	if st, ok := ctx.Value(statusKey{}).(*int); ok && err != nil {
		*st = api.StatusOf(err)
	}
	return toolError(err)
}

// toolError is err as a tool error: the local API's error body, as text
// and as structured content.
func toolError(err error) (*sdk.CallToolResult, error) {
	if errors.Is(err, context.Canceled) {
		return nil, err
	}
	body := api.ErrorBody{Error: *api.AsError(err)}
	b, merr := json.Marshal(body)
	if merr != nil {
		return nil, merr
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

func badRequest(format string, args ...any) error {
	return api.Errorf(api.CodeBadRequest, format, args...)
}

func checkLimit(limit int) error {
	if limit < 0 || limit > MaxLimit {
		return badRequest("limit %d: give 1 to %d", limit, MaxLimit)
	}
	return nil
}

// logDate is the day of a daily log's path (workspace.LogDate) as
// YYYY-MM-DD, else "".
func logDate(p string) string {
	if d, ok := workspace.LogDate(p); ok {
		return d.Format(time.DateOnly)
	}
	return ""
}

func (s *server) memorySearch(ctx context.Context, in searchIn) (any, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, badRequest("query is empty")
	}
	if err := checkLimit(in.Limit); err != nil {
		return nil, err
	}
	res, err := s.b.MemorySearch(ctx, s.id.Agent, api.SearchRequest{Query: in.Query, User: s.id.User, Limit: in.Limit, MinScore: in.MinScore, Context: in.Context})
	if err != nil {
		return nil, err
	}
	out := searchOut{Hits: make([]searchHit, 0, len(res.Hits)), Commit: res.Commit}
	for _, h := range res.Hits {
		if h.User != "" && h.User != s.id.User {
			continue // never another user's memory, whatever the backend did
		}
		scope := scopeAgent
		if h.User != "" {
			scope = scopeUser
		}
		out.Hits = append(out.Hits, searchHit{Path: h.Path, Scope: scope, StartLine: h.StartLine, EndLine: h.EndLine, Date: logDate(h.Path), Score: h.Score, TextScore: h.TextScore, VectorScore: h.VectorScore, Text: h.Text, Context: h.Context})
	}
	return out, nil
}

// isMemoryPath reports whether rel names a memory file (behavior.md §1).
func isMemoryPath(rel string) bool { return workspace.KindOf(rel).IsMemory() }

// checkPath refuses a path that is not clean or that reaches into users/:
// a user's files are reached through the session's user only.
func checkPath(p string) (string, error) {
	if p == "" || strings.Contains(p, `\`) || !fs.ValidPath(p) || p == "." {
		return "", api.Errorf(api.CodeBadPath, "path %q is not a clean relative path inside the agent workspace", p)
	}
	// Case-blind: on a case-insensitive disk (--dir on macOS) USERS/ is users/.
	if first, _, _ := strings.Cut(p, "/"); strings.EqualFold(first, workspace.UsersDir) {
		return "", api.Errorf(api.CodeForbidden, "path %q: a user's files are reached through this session's user with scope user, never by their users/ path", p)
	}
	return p, nil
}

// scopeUser returns the user a file argument with scope reaches.
func (s *server) scopeUser(scope string) (string, error) {
	switch scope {
	case scopeAgent:
		return "", nil
	case scopeUser:
		if s.id.User == "" {
			return "", badRequest("scope user: this session has no user; use scope agent")
		}
		return s.id.User, nil
	case "":
		return s.id.User, nil
	}
	return "", badRequest("scope %q: use user or agent", scope)
}

func scopeName(user string) string {
	if user == "" {
		return scopeAgent
	}
	return scopeUser
}

func (s *server) memoryGet(ctx context.Context, in getIn) (any, error) {
	p, err := checkPath(in.Path)
	if err != nil {
		return nil, err
	}
	if !isMemoryPath(p) {
		return nil, api.Errorf(api.CodeNotMemory,
			"%s is not a memory file: memory_get reads MEMORY.md and memory/*.md (the workspace's other files are resources)", p)
	}
	if in.From < 0 || in.Lines < 0 {
		return nil, badRequest("from and lines count from 1")
	}
	user, err := s.scopeUser(in.Scope)
	if err != nil {
		return nil, err
	}
	in.Scope = scopeName(user)
	f, err := s.b.ReadFile(ctx, s.id.Agent, user, p)
	if err != nil {
		return nil, s.inScope(ctx, err, p, user)
	}
	return window(f, p, in), nil
}

// inScope names the scope in err, an error about path p of user's
// ("" the agent's), when the session has a user (a path names two files
// then) and the error depends on which file it is. A missing copy of
// the user's own says whether the agent's shared one exists.
func (s *server) inScope(ctx context.Context, err error, p, user string) error {
	e := api.AsError(err)
	switch e.Code {
	case api.CodeNotFound, api.CodeStale, api.CodeExists, api.CodePathConflict:
	default:
		return err
	}
	if s.id.User == "" {
		return err
	}
	if user == "" {
		return api.Errorf(e.Code, "scope agent (the agent's shared files): %s", e.Message)
	}
	if e.Code == api.CodeNotFound {
		if _, aerr := s.b.ReadFile(ctx, s.id.Agent, "", p); aerr == nil {
			return api.Errorf(e.Code, "scope user: user %s has no %s of their own; the agent's shared %s is read with scope agent", s.id.User, p, p)
		}
	}
	return api.Errorf(e.Code, "scope user (user %s's own files; the agent's shared files are scope agent): %s", s.id.User, e.Message)
}

// window cuts the lines in.From.. of f, at most in.Lines of them and at
// most MaxGetBytes; a cut is reported, never silent.
func window(f api.File, p string, in getIn) getOut {
	lines := strings.SplitAfter(f.Content, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	from := max(in.From, 1)
	out := getOut{Path: p, Scope: in.Scope, From: from, TotalLines: len(lines), ETag: f.ETag}
	if from > len(lines) {
		out.To = len(lines)
		return out
	}
	end := len(lines)
	if in.Lines > 0 {
		end = min(end, from-1+in.Lines)
	}
	var b strings.Builder
	i := from - 1
	for ; i < end; i++ {
		l := lines[i]
		if b.Len()+len(l) > MaxGetBytes {
			if b.Len() == 0 { // one line longer than the cap: its head
				cut := MaxGetBytes
				for cut > 0 && !utf8.RuneStart(l[cut]) {
					cut--
				}
				b.WriteString(l[:cut])
				i++
			}
			out.Truncated = true
			break
		}
		b.WriteString(l)
	}
	out.Text = b.String()
	out.To = i // i lines are behind us
	if out.Truncated && i < len(lines) {
		out.NextFrom = i + 1
	}
	return out
}

func (s *server) memoryAppend(ctx context.Context, in appendIn) (any, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, badRequest("text is empty")
	}
	ctx, err := withKey(ctx, in.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	if err := s.authorizeTeam(ctx, in.Agents); err != nil {
		return nil, err
	}
	res, err := s.b.MemoryAppend(ctx, s.id.Agent, api.AppendRequest{User: s.id.User, Room: in.Room, Text: in.Text, Agents: in.Agents})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *server) memoryWrite(ctx context.Context, in writeIn) (any, error) {
	p, err := checkPath(in.Path)
	if err != nil {
		return nil, err
	}
	if in.IfMatch == "" {
		return nil, api.Errorf(api.CodePreconditionRequired, "send If-Match with the ETag of your last read (or * to create a new file)")
	}
	user, err := s.scopeUser(in.Scope)
	if err != nil {
		return nil, err
	}
	ctx, err = withKey(ctx, in.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	res, err := s.b.WriteFile(ctx, s.id.Agent, user, p, in.IfMatch, []byte(in.Content))
	if err != nil {
		return nil, s.inScope(ctx, err, p, user)
	}
	return res, nil
}

func (s *server) skillSearch(ctx context.Context, in skillSearchIn) (any, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, badRequest("query is empty")
	}
	if err := checkLimit(in.Limit); err != nil {
		return nil, err
	}
	res, err := s.b.SkillsSearch(ctx, s.id.Agent, api.SkillsSearchRequest{Query: in.Query, User: s.id.User, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	if res.Skills == nil {
		res.Skills = []api.SkillEntry{}
	}
	return res, nil
}

func (s *server) skillGet(ctx context.Context, in skillGetIn) (any, error) {
	if in.Name == "" || path.Base(in.Name) != in.Name {
		return nil, badRequest("name %q: give a skill's name as skill_search lists it", in.Name)
	}
	res, err := s.b.Skill(ctx, s.id.Agent, s.id.User, in.Name)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// withKey returns ctx with a write tool's idempotency_key argument, which
// the backend reads as the API's Idempotency-Key.
func withKey(ctx context.Context, key string) (context.Context, error) {
	if key == "" {
		return ctx, nil
	}
	if err := api.CheckIdempotencyKey("idempotency_key", key); err != nil {
		return nil, err
	}
	return api.WithIdempotencyKey(ctx, key), nil
}

// errCode is err's API code, "" for nil.
func errCode(err error) string {
	if err == nil {
		return ""
	}
	return string(api.AsError(err).Code)
}
