// Package console serves the web console at /ui/: its embedded pages
// (package web), sign-in (a bearer token or a one-time code exchanged
// for a session cookie), CSRF protection, the overview, and the local
// API answered for a session as for the session's token. What the pages
// show comes from the daemon: console holds no state but its sessions.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console/web"
)

// CookieName is the session cookie; CSRFHeader the header every change
// made with it must carry (the session's csrf value).
const (
	CookieName = "quire_session"
	CSRFHeader = "X-CSRF-Token"
)

// CSP is the console's Content-Security-Policy: its own files only, no
// inline script.
const CSP = "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'; object-src 'none'"

// Options configure the console.
type Options struct {
	// Tokens and People are the API's bearer tokens and their holders:
	// a token signs in as its holder, scoped to its agents.
	Tokens api.Tokens
	People api.People
	// Sessions keeps sessions and one-time codes (shared by listeners).
	Sessions *Sessions
	// Overview answers GET /ui/api/overview for the agents allows admits.
	Overview func(ctx context.Context, allows func(agent string) bool) (Overview, error)
	// Subscribe delivers the event stream's events until ctx ends
	// (GET /ui/api/events, as server-sent events).
	Subscribe func(ctx context.Context) <-chan api.Event
	Logger    *slog.Logger
}

// Handler serves /ui/ and passes every other request to apiHandler,
// with the session of a request that carries the cookie (and no
// Authorization header) as its grant.
func Handler(apiHandler http.Handler, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &console{opts: opts, api: apiHandler}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ui/api/login", c.login)
	mux.HandleFunc("GET /ui/login", c.loginLink)
	mux.HandleFunc("POST /ui/api/logout", c.withSession(c.logout))
	mux.HandleFunc("GET /ui/api/session", c.withSession(c.session))
	mux.HandleFunc("GET /ui/api/overview", c.withSession(c.overview))
	mux.HandleFunc("GET /ui/api/events", c.withSession(c.events))
	mux.HandleFunc("/ui/", c.static)
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusMovedPermanently) })
	mux.HandleFunc("/", c.passAPI)
	return mux
}

type console struct {
	opts Options
	api  http.Handler
}

// Overview is the answer of GET /ui/api/overview.
type Overview struct {
	Agents  []AgentOverview  `json:"agents"`
	Sources []SourceOverview `json:"sources"`
	Recent  []api.Event      `json:"recent"`
}

// AgentOverview is one agent on the overview page.
type AgentOverview struct {
	Name          string         `json:"name"`
	Source        string         `json:"source"`
	Commit        string         `json:"commit"`
	DeployedAt    time.Time      `json:"deployed_at"`
	Index         IndexOverview  `json:"index"`
	Budget        BudgetOverview `json:"budget"`
	Warnings      []string       `json:"warnings"`
	OpenProposals int            `json:"open_proposals"`
}

// IndexOverview is an agent's index: "current", "indexing" or "failed",
// and how long the deployed commit has waited for it, in seconds.
type IndexOverview struct {
	State string  `json:"state"`
	Lag   float64 `json:"lag"`
}

// BudgetOverview is an agent's context files against its budget: the
// numbers of `quire prompt --report` and the language server. Injected,
// Total and PerFile are in Unit ("chars" or "tokens", the budget's);
// TotalChars and LimitChars are the injected chars and the total budget
// in chars whatever the unit. Cut and Dropped name the files the budget
// cut or left out.
type BudgetOverview struct {
	Unit       string      `json:"unit"`
	Injected   int         `json:"injected"`
	Total      int         `json:"total"`
	PerFile    int         `json:"per_file"`
	TotalChars int         `json:"total_chars"`
	LimitChars int         `json:"limit_chars"`
	Cut        []string    `json:"cut"`
	Dropped    []string    `json:"dropped"`
	Largest    LargestFile `json:"largest"`
}

// LargestFile is an agent's largest context file, in the budget's
// unit: its size, what of it is in the prompt, the per-file budget, and
// its status ("full", "truncated", "clamped", "dropped").
type LargestFile struct {
	File     string `json:"file"`
	Size     int    `json:"size"`
	Injected int    `json:"injected"`
	Limit    int    `json:"limit"`
	Status   string `json:"status"`
}

// SourceOverview is a source's health: "ok" or "failing" with the
// error, and its lag in seconds.
type SourceOverview struct {
	Name  string  `json:"name"`
	State string  `json:"state"`
	Error string  `json:"error,omitempty"`
	Lag   float64 `json:"lag"`
}

// SessionInfo is the answer of GET /ui/api/session.
type SessionInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	// Agents is the list of agents the session may use, or "*".
	Agents any    `json:"agents"`
	CSRF   string `json:"csrf"`
}

// LoginRequest is the body of POST /ui/api/login.
type LoginRequest struct {
	Token string `json:"token,omitempty"`
	Code  string `json:"code,omitempty"`
}

func (c *console) login(w http.ResponseWriter, r *http.Request) {
	var req LoginRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, api.Errorf(api.CodeBadRequest, "decode JSON body: %v; send {\"token\":...} or {\"code\":...}", err))
		return
	}
	g, err := c.grant(req)
	if err != nil {
		fail(w, err)
		return
	}
	c.startSession(w, r, g)
	w.WriteHeader(http.StatusNoContent)
}

func (c *console) loginLink(w http.ResponseWriter, r *http.Request) {
	g, err := c.grant(LoginRequest{Code: r.URL.Query().Get("code")})
	if err != nil {
		noStore(w)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "This login link is used up or expired: run `quire ui` again for a new one.\n")
		return
	}
	c.startSession(w, r, g)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// grant is what a token or a one-time code signs in as.
func (c *console) grant(req LoginRequest) (api.Grant, error) {
	switch {
	case req.Code != "":
		if c.opts.Sessions != nil {
			if g, ok := c.opts.Sessions.redeem(req.Code); ok {
				return g, nil
			}
		}
		return api.Grant{}, api.Errorf(api.CodeUnauthorized, "this login code is used up or expired: run `quire ui` for a new one")
	case req.Token != "":
		agents, ok := c.opts.Tokens.Agents(req.Token)
		if !ok {
			return api.Grant{}, api.Errorf(api.CodeUnauthorized, "unknown token")
		}
		p, ok := c.opts.People.Person(req.Token)
		if !ok {
			p = api.Person{ID: api.TokenID(req.Token)}
		}
		return api.Grant{Agents: agents, Person: p}, nil
	}
	return api.Grant{}, api.Errorf(api.CodeBadRequest, "send {\"token\":...} or {\"code\":...}")
}

func (c *console) startSession(w http.ResponseWriter, r *http.Request, g api.Grant) {
	id, _ := c.opts.Sessions.open(g)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	c.opts.Logger.Info("console sign-in", "person", g.Person.ID)
}

// withSession runs h for a request with a live session (401 without),
// checking the CSRF header of a change (403 without).
func (c *console) withSession(h func(w http.ResponseWriter, r *http.Request, ss *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss, err := c.sessionOf(r)
		if err != nil {
			fail(w, err)
			return
		}
		h(w, r, ss)
	}
}

// sessionOf returns r's session, checking CSRF for a change.
func (c *console) sessionOf(r *http.Request) (*session, error) {
	ck, err := r.Cookie(CookieName)
	if err != nil || c.opts.Sessions == nil {
		return nil, api.Errorf(api.CodeUnauthorized, "sign in first: POST /ui/api/login, or the link `quire ui` prints")
	}
	ss, ok := c.opts.Sessions.lookup(ck.Value)
	if !ok {
		return nil, api.Errorf(api.CodeUnauthorized, "the session is over: sign in again")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !ss.csrfOK(r.Header.Get(CSRFHeader)) {
		return nil, api.Errorf(api.CodeCSRF, "a change needs the header %s with the session's csrf value (GET /ui/api/session)", CSRFHeader)
	}
	return ss, nil
}

func (c *console) logout(w http.ResponseWriter, r *http.Request, _ *session) {
	if ck, err := r.Cookie(CookieName); err == nil {
		c.opts.Sessions.close(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

func (c *console) session(w http.ResponseWriter, r *http.Request, ss *session) {
	var agents any = ss.grant.Agents
	for _, a := range ss.grant.Agents {
		if a == "*" {
			agents = "*"
		}
	}
	p := ss.grant.Person
	reply(w, SessionInfo{ID: p.ID, Name: p.Name, Email: p.Email, Agents: agents, CSRF: ss.csrf})
}

func (c *console) overview(w http.ResponseWriter, r *http.Request, ss *session) {
	if c.opts.Overview == nil {
		fail(w, api.Errorf(api.CodeNotFound, "no overview"))
		return
	}
	ov, err := c.opts.Overview(r.Context(), ss.grant.Allows)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, ov)
}

// events streams the events of GET /v1/events that the session may see
// as server-sent events (what EventSource reads): "event: <type>" and
// the event's JSON as data, and a comment every 25 s to keep proxies
// from closing an idle stream.
func (c *console) events(w http.ResponseWriter, r *http.Request, ss *session) {
	if c.opts.Subscribe == nil {
		fail(w, api.Errorf(api.CodeNotFound, "no event stream"))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ch := c.opts.Subscribe(ctx)
	flusher, _ := w.(http.Flusher)
	secureHeaders(w)
	noStore(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ": quire events\n\n")
	if flusher != nil {
		flusher.Flush()
	}
	tick := time.NewTicker(25 * time.Second)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if ev.Agent != "" && !ss.grant.Allows(ev.Agent) {
				continue
			}
			b, err := api.Encode(ev)
			if err != nil {
				continue
			}
			if _, err := io.WriteString(w, "event: "+ev.Type+"\ndata: "+strings.TrimSpace(string(b))+"\n\n"); err != nil {
				return
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// passAPI answers an API request; one with the session cookie and no
// Authorization header goes with the session's grant.
func (c *console) passAPI(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		c.api.ServeHTTP(w, r)
		return
	}
	if _, err := r.Cookie(CookieName); err != nil {
		c.api.ServeHTTP(w, r)
		return
	}
	ss, err := c.sessionOf(r)
	if err != nil {
		fail(w, err)
		return
	}
	c.api.ServeHTTP(w, api.WithGrant(r, ss.grant))
}

// static serves the console's files; a path that is no file is the
// page itself (the pages route on the client).
func (c *console) static(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/ui/api/") {
		fail(w, api.Errorf(api.CodeNotFound, "no console route %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		fail(w, api.Errorf(api.CodeMethodNotAllowed, "%s %s: the console's pages are read with GET", r.Method, r.URL.Path))
		return
	}
	secureHeaders(w)
	files := web.FS()
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/ui")
	name = strings.TrimPrefix(name, "/")
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(files, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
			c.opts.Logger.Warn("console file unreadable", "file", name, "err", err)
		}
		name = "index.html"
		if b, err = fs.ReadFile(files, name); err != nil {
			http.Error(w, "the console's pages are missing from this build", http.StatusInternalServerError)
			return
		}
	}
	ctype := contentType(name)
	if strings.HasPrefix(ctype, "text/html") {
		noStore(w)
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(b)
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".woff2":
		return "font/woff2"
	}
	return "application/octet-stream"
}

func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

func noStore(w http.ResponseWriter) { w.Header().Set("Cache-Control", "no-store") }

func reply(w http.ResponseWriter, v any) {
	b, err := api.Encode(v)
	if err != nil {
		fail(w, err)
		return
	}
	secureHeaders(w)
	noStore(w)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// fail answers err as the API does: {"error":{"code","message"}}.
func fail(w http.ResponseWriter, err error) {
	e := api.AsError(err)
	b, _ := api.Encode(api.ErrorBody{Error: *e})
	secureHeaders(w)
	noStore(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(api.StatusOf(e))
	_, _ = w.Write(b)
}
