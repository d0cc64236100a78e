package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxBodyBytes bounds a request body. Writes are further bounded by the
// agent's write_limit_bytes.
const MaxBodyBytes = 4 << 20

// route is one entry of the route table.
type route struct {
	pattern string // net/http ServeMux pattern, method included
	handle  func(h *handler, w http.ResponseWriter, r *http.Request) error
}

// routes is the one route table of the local API.
var routes = []route{
	{"GET /v1/status", (*handler).status},
	{"GET /v1/agents", (*handler).agents},
	{"POST /v1/agents/{agent}/prompt", (*handler).prompt},
	{"POST /v1/agents/{agent}/memory/search", (*handler).memorySearch},
	{"POST /v1/agents/{agent}/memory/append", (*handler).memoryAppend},
	{"POST /v1/agents/{agent}/memory/flush-plan", (*handler).flushPlan},
	{"GET /v1/agents/{agent}/files", (*handler).listFiles},
	{"GET /v1/agents/{agent}/files/{path...}", (*handler).readFile},
	{"PUT /v1/agents/{agent}/files/{path...}", (*handler).writeFile},
	{"DELETE /v1/agents/{agent}/files/{path...}", (*handler).deleteFile},
	{"GET /v1/agents/{agent}/report", (*handler).report},
	{"POST /v1/agents/{agent}/skills/search", (*handler).skillsSearch},
	{"GET /v1/agents/{agent}/skills", (*handler).skills},
	{"GET /v1/agents/{agent}/skills/{name}", (*handler).skill},
	{"GET /v1/agents/{agent}/proposals", (*handler).proposals},
	{"POST /v1/agents/{agent}/proposals/{id}/approve", (*handler).approve},
	{"POST /v1/agents/{agent}/proposals/{id}/reject", (*handler).reject},
	{"GET /v1/agents/{agent}/history", (*handler).history},
	{"GET /v1/agents/{agent}/deploys", (*handler).deploys},
	{"POST /v1/agents/{agent}/prompt/diff", (*handler).promptDiff},
	{"GET /v1/agents/{agent}/templates/{path...}", (*handler).template},
	{"POST /v1/agents/{agent}/summon", (*handler).summon},
	{"POST /v1/agents/{agent}/consolidate", (*handler).consolidate},
	{"GET /v1/events", (*handler).events},
	{"GET /metrics", (*handler).metrics},
	{openAPIRoute, (*handler).openAPI},
}

// Options configure a Handler.
type Options struct {
	// Tokens, when not nil, requires "Authorization: Bearer <token>" on
	// every request and limits each token to its agents (TCP listeners).
	// Nil trusts every caller (the unix socket, whose mode is 0600).
	Tokens Tokens
	// People are the holders of Tokens: a request with a bearer token
	// acts as its holder (PersonOf) where a person is needed (approving
	// a proposal).
	People People
	// Logger receives one line per failed request; nil discards.
	Logger *slog.Logger
	// Observe, when set, is told every request's route and latency.
	Observe func(route string, status int, d time.Duration)
}

// Handler returns the http.Handler of the local API.
func Handler(b Backend, opts Options) http.Handler {
	h := &handler{b: b, opts: opts}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		rt := rt
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			var err error
			if rt.pattern != openAPIRoute {
				err = h.authorize(r)
			}
			if err == nil {
				r = h.withPerson(r)
			}
			if err == nil {
				err = rt.handle(h, sw, r)
			}
			if err != nil {
				h.fail(sw, r, err)
			}
			if h.opts.Observe != nil {
				h.opts.Observe(rt.pattern, sw.status, time.Since(start))
			}
		})
	}
	// A known path with another method is a 405 that lists the methods.
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range routes {
		method, p, _ := strings.Cut(rt.pattern, " ")
		if allowed[p] == nil {
			paths = append(paths, p)
		}
		allowed[p] = append(allowed[p], method)
	}
	known := http.NewServeMux() // the paths alone, to tell 405 from 404
	for _, p := range paths {
		known.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, p := known.Handler(r); p != "" {
			allow := strings.Join(allowed[p], ", ")
			w.Header().Set("Allow", allow)
			h.fail(w, r, Errorf(CodeMethodNotAllowed, "%s %s: use %s", r.Method, r.URL.Path, allow))
			return
		}
		h.fail(w, r, Errorf(CodeNotFound, "no route %s %s; the local API's routes are in GET /v1/openapi.json and in docs/api.md of Quire's repository", r.Method, r.URL.Path))
	})
	return mux
}

type handler struct {
	b      Backend
	opts   Options
	bodies sync.Pool // *bytes.Buffer for request bodies
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Tokens maps a bearer token to the agents it may use; "*" means every
// agent.
type Tokens map[string][]string

// ParseTokens reads a token file: one token per line followed by the
// agents it may use, separated by white space or commas ("*" for all),
// and optionally the holder's name=, email= and id= (see ParseTokenFile);
// blank lines and lines starting with # are skipped.
func ParseTokens(r io.Reader) (Tokens, error) {
	t, _, err := ParseTokenFile(r)
	return t, err
}

// agents returns the agents token may use, and whether it is a token.
// Tokens are compared by their SHA-256 digests, in constant time and over
// every configured token, so neither the time nor the work taken says how
// long a valid token is or how much of one a guess got right.
func (t Tokens) agents(token string) ([]string, bool) {
	want := sha256.Sum256([]byte(token))
	var agents []string
	found := 0
	for k, v := range t {
		have := sha256.Sum256([]byte(k))
		if subtle.ConstantTimeCompare(have[:], want[:]) == 1 {
			agents, found = v, 1
		}
	}
	return agents, found == 1
}

// AllowsAll reports whether token may use every agent ("*"): what the
// routes about the daemon as a whole (metrics) need.
func (t Tokens) AllowsAll(token string) bool {
	agents, ok := t.agents(token)
	return ok && slices.Contains(agents, "*")
}

// Allows reports whether token may use agent ("" for routes that name
// no agent).
func (t Tokens) Allows(token, agent string) bool {
	agents, ok := t.agents(token)
	if !ok {
		return false
	}
	if agent == "" {
		return true
	}
	for _, a := range agents {
		if a == "*" || a == agent {
			return true
		}
	}
	return false
}

func (h *handler) authorize(r *http.Request) error {
	if g := GrantOf(r.Context()); g != nil {
		if r.URL.Path == "/metrics" && !g.allows("*") {
			return Errorf(CodeForbidden, "/metrics needs a token for every agent (*): it describes them all")
		}
		if !g.allows(r.PathValue("agent")) {
			return Errorf(CodeForbidden, "this session may not use agent %q", r.PathValue("agent"))
		}
		return nil
	}
	if h.opts.Tokens == nil {
		return nil
	}
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || token == "" {
		return Errorf(CodeUnauthorized, "send Authorization: Bearer <token> (a token from the daemon's --token-file)")
	}
	if _, ok := h.opts.Tokens.agents(token); !ok {
		return Errorf(CodeUnauthorized, "unknown token")
	}
	if r.URL.Path == "/metrics" && !h.opts.Tokens.AllowsAll(token) {
		return Errorf(CodeForbidden, "/metrics needs a token for every agent (*): it describes them all")
	}
	if !h.opts.Tokens.Allows(token, r.PathValue("agent")) {
		return Errorf(CodeForbidden, "this token may not use agent %q", r.PathValue("agent"))
	}
	return nil
}

// allows returns whether the caller of r may see agent: its session's
// grant, its bearer token, or anyone on the unix socket.
func (h *handler) allows(r *http.Request) func(agent string) bool {
	if g := GrantOf(r.Context()); g != nil {
		return g.allows
	}
	tok := h.token(r)
	if tok == "" {
		return func(string) bool { return true }
	}
	return func(agent string) bool { return h.opts.Tokens.Allows(tok, agent) }
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := AsError(err)
	status := StatusOf(e)
	var stale *StaleEdit
	if errors.As(err, &stale) {
		b, _ := Encode(StaleEditBody{Error: *e, Content: stale.Content, ETag: stale.ETag, Deleted: stale.Deleted})
		writeStatusJSON(w, status, b)
		return
	}
	if status >= 500 {
		h.opts.Logger.Warn("api request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", e.Message)
	}
	b, _ := Encode(ErrorBody{Error: *e}) // two strings: it cannot fail
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func reply(w http.ResponseWriter, v any) error {
	b, err := Encode(v)
	if err != nil {
		return err
	}
	writeJSON(w, b)
	return nil
}

// Encode encodes an answer of the API as JSON ending in a newline, with
// <, > and & as themselves rather than \u003c escapes: a prompt's tags
// and a memory's "R&D" read as written in a terminal (curl) and in logs.
// That is safe because answers go out as application/json with nosniff
// (writeJSON), which no browser renders as a page.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeJSON writes an encoded JSON answer with its length, so that it
// goes out in one write instead of as chunks.
func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	return decodeWith(dec, v)
}

// decodeBytes decodes a body already read, with decode's rules.
func decodeBytes(body []byte, v any) error {
	return decodeWith(json.NewDecoder(bytes.NewReader(body)), v)
}

func decodeWith(dec *json.Decoder, v any) error {
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return Errorf(CodeBadRequest, "decode JSON body: %v", err)
	}
	if dec.More() {
		return Errorf(CodeBadRequest, "decode JSON body: data after the JSON object (at byte %d); send exactly one object", dec.InputOffset())
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return Errorf(CodeBadRequest, "decode JSON body: data after the JSON object (at byte %d); send exactly one object", dec.InputOffset())
	}
	return nil
}

func tooLarge() error {
	return Errorf(CodeTooLarge, "request body over %d bytes", MaxBodyBytes)
}

// getBody returns a buffer to read a request into.
func (h *handler) getBody() *bytes.Buffer {
	if buf, ok := h.bodies.Get().(*bytes.Buffer); ok {
		return buf
	}
	return new(bytes.Buffer)
}

// putBody keeps buf for the next request unless a large request grew it.
func (h *handler) putBody(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		buf.Reset()
		h.bodies.Put(buf)
	}
}

// readBody reads r's body, up to MaxBodyBytes, into buf.
func readBody(r *http.Request, buf *bytes.Buffer) ([]byte, error) {
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, MaxBodyBytes+1)); err != nil {
		return nil, Errorf(CodeBadRequest, "read body: %v", err)
	}
	if buf.Len() > MaxBodyBytes {
		return nil, tooLarge()
	}
	return buf.Bytes(), nil
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) error {
	st := h.b.Status(r.Context())
	allows := h.allows(r)
	kept := []AgentStatus{}
	for _, a := range st.Agents {
		if allows(a.Name) {
			kept = append(kept, a)
		}
	}
	st.Agents = kept
	return reply(w, st)
}

func (h *handler) token(r *http.Request) string {
	if h.opts.Tokens == nil {
		return ""
	}
	t, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return t
}

func (h *handler) agents(w http.ResponseWriter, r *http.Request) error {
	all := h.b.Agents(r.Context())
	out := AgentsResponse{Agents: []Agent{}}
	allows := h.allows(r)
	for _, a := range all {
		if allows(a.Name) {
			out.Agents = append(out.Agents, a)
		}
	}
	return reply(w, out)
}

func (h *handler) prompt(w http.ResponseWriter, r *http.Request) error {
	buf := h.getBody()
	defer h.putBody(buf)
	body, err := readBody(r, buf)
	if err != nil {
		return err
	}
	agent := r.PathValue("agent")
	if pa, ok := h.b.(PromptAnswers); ok {
		if b := pa.AnsweredPrompt(agent, body); b != nil {
			writeJSON(w, b)
			return nil
		}
	}
	var req PromptRequest
	if err := decodeBytes(body, &req); err != nil {
		return err
	}
	b, err := h.b.PromptJSON(r.Context(), agent, req, body)
	if err != nil {
		return err
	}
	writeJSON(w, b)
	return nil
}

func (h *handler) memorySearch(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Query) == "" {
		return Errorf(CodeBadRequest, "query is empty")
	}
	res, err := h.b.MemorySearch(r.Context(), r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) memoryAppend(w http.ResponseWriter, r *http.Request) error {
	ctx, err := idempotent(r)
	if err != nil {
		return err
	}
	var req AppendRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Text) == "" {
		return Errorf(CodeBadRequest, "text is empty")
	}
	if err := h.authorizeAgents(r, req.Agents); err != nil {
		return err
	}
	res, err := h.b.MemoryAppend(ctx, r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) flushPlan(w http.ResponseWriter, r *http.Request) error {
	var req FlushPlanRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.ContextWindow <= 0 {
		return Errorf(CodeBadRequest, "context_window must be a positive number of tokens")
	}
	res, err := h.b.FlushPlan(r.Context(), r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) readFile(w http.ResponseWriter, r *http.Request) error {
	f, err := h.b.ReadFile(r.Context(), r.PathValue("agent"), r.URL.Query().Get("user"), r.PathValue("path"))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", f.ETag)
	return reply(w, f)
}

// FileBody is the JSON form of a PUT body (application/json); a
// text/markdown body is the file's content itself (writeContent).
type FileBody struct {
	Content string `json:"content"`
}

func (h *handler) writeFile(w http.ResponseWriter, r *http.Request) error {
	ifMatch := r.Header.Get("If-Match")
	if ifMatch == "" {
		return Errorf(CodePreconditionRequired, "send If-Match with the ETag of your last read (or * to create a new file)")
	}
	ctx, err := idempotent(r)
	if err != nil {
		return err
	}
	content, err := writeContent(r)
	if err != nil {
		return err
	}
	res, err := h.b.WriteFile(ctx, r.PathValue("agent"), r.URL.Query().Get("user"), r.PathValue("path"), ifMatch, content)
	if err != nil {
		return err
	}
	if res.ETag != "" {
		w.Header().Set("ETag", res.ETag)
	}
	return reply(w, res)
}

func (h *handler) skillsSearch(w http.ResponseWriter, r *http.Request) error {
	var req SkillsSearchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	res, err := h.b.SkillsSearch(r.Context(), r.PathValue("agent"), req)
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) skills(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get("all") == "true" {
		return h.allSkills(w, r)
	}
	res, err := h.b.Skills(r.Context(), r.PathValue("agent"), r.URL.Query().Get("user"))
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) skill(w http.ResponseWriter, r *http.Request) error {
	res, err := h.b.Skill(r.Context(), r.PathValue("agent"), r.URL.Query().Get("user"), r.PathValue("name"))
	if err != nil {
		return err
	}
	return reply(w, res)
}

func (h *handler) events(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ch := h.b.Subscribe(ctx)
	allows := h.allows(r)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // as Encode
	for ev := range ch {
		if ev.Agent != "" && !allows(ev.Agent) {
			continue
		}
		if err := enc.Encode(ev); err != nil {
			return nil // the client went away
		}
		flush()
	}
	return nil
}

func (h *handler) metrics(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	h.b.WriteMetrics(w)
	return nil
}

// writeStatusJSON writes an encoded JSON answer with status.
func writeStatusJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
