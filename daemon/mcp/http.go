package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/workspace"
)

// Path is where the daemon serves MCP's streamable HTTP transport.
const Path = "/mcp"

// HTTPOptions configure Handler.
type HTTPOptions struct {
	Options
	// Tokens, when not nil, requires a bearer token that may use the
	// session's agent, as on the local API's TCP listener; a session is
	// then bound to its token, agent and user. Nil trusts every caller
	// (the unix socket).
	Tokens api.Tokens
	// Sessions bounds the sessions; handlers that share one share its
	// limits. Nil means limits of their own, the defaults.
	Sessions *Sessions
}

// maxIdleServers bounds the servers kept for identities without a live
// session.
const maxIdleServers = 256

// Handler serves MCP's streamable HTTP transport at Path. The session's
// identity comes from the query: /mcp?agent=A&user=U (agent may be left
// out when the caller may use exactly one agent). A request for an agent
// the token may not use is answered 403 with the API's error body; an
// initialize past opts.Sessions' limits 429 or 503 with a JSON-RPC
// error that names the limit.
func Handler(b Backend, opts HTTPOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Sessions == nil {
		opts.Sessions = NewSessions(SessionLimits{})
	}
	h := &handler{b: b, opts: opts, servers: map[Identity]*entry{}}
	h.mcp = sdk.NewStreamableHTTPHandler(h.server, &sdk.StreamableHTTPOptions{
		JSONResponse: true,
		Logger:       sdkLogger(opts.Logger),
		// The timer of real time; Sessions also closes the idle ones
		// by its clock when a session would be over a limit.
		SessionTimeout: opts.Sessions.lim.Idle,
		// The SDK's DNS rebinding protection stays on: on a loopback
		// listener a Host that is not loopback is refused (the unix
		// socket has no address it applies to).
	})
	if opts.Tokens != nil {
		h.opts.allowAgent = tokenAllows(opts.Tokens)
		h.bound = auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h.mcp)
	} else {
		h.bound = h.mcp
	}
	return h
}

type handler struct {
	b     Backend
	opts  HTTPOptions
	mcp   *sdk.StreamableHTTPHandler
	bound http.Handler

	mu      sync.Mutex
	servers map[Identity]*entry
}

type entry struct {
	srv    *sdk.Server
	cancel context.CancelFunc
}

type identityKey struct{}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := h.identify(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
	if r.Method == http.MethodDelete {
		h.bound.ServeHTTP(w, r)
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && h.session(id, sid) == nil {
			h.opts.Sessions.closed(sid) // its slot is free at once
		}
		return
	}
	if r.Method != http.MethodPost {
		h.bound.ServeHTTP(w, r)
		return
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		h.opts.Sessions.begin(sid)
		defer h.opts.Sessions.end(sid)
		h.bound.ServeHTTP(w, r)
		return
	}
	// No session yet: an initialize opens one, within the limits.
	req, ok := h.firstMessage(w, r)
	if !ok {
		return
	}
	if req == nil || req.Method != "initialize" {
		if e := beforeInitializeHTTP(req); e != nil {
			answer(w, http.StatusBadRequest, req.ID, e)
			return
		}
		h.bound.ServeHTTP(w, r)
		return
	}
	caller := h.caller(r)
	if err := h.opts.Sessions.reserve(caller); err != nil {
		full := err.(*fullError)
		data, _ := json.Marshal(rpcErrorData{Code: "too_many_sessions"})
		level := slog.LevelDebug
		if full.first {
			level = slog.LevelWarn // later refusals, until a session opens, at debug
		}
		h.opts.Logger.Log(r.Context(), level, "mcp: session refused", "agent", id.Agent, "err", full.msg)
		answer(w, full.status, req.ID, &jsonrpc.Error{Code: codeTooManySessions, Message: full.msg, Data: data})
		return
	}
	h.bound.ServeHTTP(w, r)
	h.opts.Sessions.opened(caller, h.session(id, w.Header().Get("Mcp-Session-Id")))
}

// codeTooManySessions is the JSON-RPC code (one of the implementation's
// own, -32000 to -32099) of an initialize over a session limit.
const codeTooManySessions = -32000

// maxFirstMessage bounds the body of a request without a session that
// is read before the SDK reads it, as the SDK bounds every body.
const maxFirstMessage = sdk.DefaultMaxRequestBodyBytes

// firstMessage reads r's body, puts it back for the SDK, and returns the
// request it holds when it is one (nil for anything else, which the SDK
// answers). A batch is answered here: false.
func (h *handler) firstMessage(w http.ResponseWriter, r *http.Request) (*jsonrpc.Request, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFirstMessage))
	r.Body.Close()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("request body over %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed) {
		answer(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "invalid request: a JSON-RPC batch, which MCP has not had since " + versionNoBatches + ": send initialize alone"})
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, true
	}
	req, _ := msg.(*jsonrpc.Request)
	return req, true
}

// beforeInitializeHTTP is beforeInitialize for a request without a
// session; nil for what is not a request.
func beforeInitializeHTTP(req *jsonrpc.Request) *jsonrpc.Error {
	if req == nil {
		return nil
	}
	return beforeInitialize(req)
}

// answer writes a JSON-RPC error response with status.
func answer(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorResponse(id, e))
}

// caller is whose session limit a request counts against: its token's
// (hashed), or "" on the unix socket.
func (h *handler) caller(r *http.Request) string {
	tok, _ := h.token(r)
	if tok == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// session returns the open session sid of id's server, or nil.
func (h *handler) session(id Identity, sid string) *sdk.ServerSession {
	if sid == "" {
		return nil
	}
	h.mu.Lock()
	e := h.servers[id]
	h.mu.Unlock()
	if e == nil {
		return nil
	}
	for ss := range e.srv.Sessions() {
		if ss.ID() == sid {
			return ss
		}
	}
	return nil
}

// fail answers err with the API's error body; a 401 says where the
// metadata of this protected resource is (RFC 9728), so that an MCP
// client shows the message rather than start an OAuth flow blind.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	e := api.AsError(err)
	w.Header().Set("Content-Type", "application/json")
	if e.Code == api.CodeUnauthorized {
		challenge := fmt.Sprintf("Bearer resource_metadata=%q", origin(r)+MetadataPath+Path)
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
	}
	w.WriteHeader(api.StatusOf(e))
	b, _ := api.Encode(api.ErrorBody{Error: *e}) // bridges show the body as it is
	_, _ = w.Write(b)
}

func (h *handler) token(r *http.Request) (string, error) {
	if h.opts.Tokens == nil {
		return "", nil
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return "", api.Errorf(api.CodeUnauthorized, "send Authorization: Bearer <token> (a token from the daemon's --token-file)")
	}
	if !h.opts.Tokens.Allows(tok, "") {
		return "", api.Errorf(api.CodeUnauthorized, "unknown token")
	}
	return tok, nil
}

// identify authorizes r and returns the identity its session acts for.
func (h *handler) identify(r *http.Request) (Identity, error) {
	tok, err := h.token(r)
	if err != nil {
		return Identity{}, err
	}
	q := r.URL.Query()
	id := Identity{Agent: q.Get("agent"), User: q.Get("user")}
	if id.User != "" {
		if _, err := workspace.EncodeID(id.User); err != nil {
			return Identity{}, api.Errorf(api.CodeBadUser, "user %q cannot name a directory: %v", id.User, err)
		}
	}
	newSession := r.Header.Get("Mcp-Session-Id") == ""
	if id.Agent == "" || newSession {
		agents, err := h.b.Agents(r.Context())
		if err != nil {
			return Identity{}, err
		}
		if id.Agent != "" {
			if tok != "" && !h.opts.Tokens.Allows(tok, id.Agent) {
				return Identity{}, api.Errorf(api.CodeForbidden, "this token may not use agent %q", id.Agent)
			}
			for _, a := range agents {
				if a.Name == id.Agent {
					return id, nil
				}
			}
			return Identity{}, api.Errorf(api.CodeUnknownAgent, "no deployed agent %q; GET /v1/agents lists them", id.Agent)
		}
		var names []string
		for _, a := range agents {
			if tok == "" || h.opts.Tokens.Allows(tok, a.Name) {
				names = append(names, a.Name)
			}
		}
		if len(names) != 1 {
			sort.Strings(names)
			return Identity{}, api.Errorf(api.CodeBadRequest, "choose an agent with %s?agent=NAME (this caller may use %d: %s)", Path, len(names), strings.Join(names, ", "))
		}
		id.Agent = names[0]
	}
	if tok != "" && !h.opts.Tokens.Allows(tok, id.Agent) {
		return Identity{}, api.Errorf(api.CodeForbidden, "this token may not use agent %q", id.Agent)
	}
	return id, nil
}

// verify binds a session to its token and identity: the SDK refuses a
// request to a session whose creator's "user ID" differs.
func (h *handler) verify(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	id, _ := ctx.Value(identityKey{}).(Identity)
	sum := sha256.Sum256([]byte(token + "\x00" + id.Agent + "\x00" + id.User))
	return &auth.TokenInfo{UserID: hex.EncodeToString(sum[:])}, nil
}

// server returns the MCP server of r's identity, made on first use.
func (h *handler) server(r *http.Request) *sdk.Server {
	id, ok := r.Context().Value(identityKey{}).(Identity)
	if !ok {
		return nil
	}
	h.mu.Lock()
	e := h.servers[id]
	h.mu.Unlock()
	if e != nil {
		return e.srv
	}
	// Built outside the lock: listing the workspace reads files.
	ctx, cancel := context.WithCancel(context.Background())
	srv := NewServer(ctx, h.b, id, h.opts.Options)
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.servers[id]; e != nil { // another request was quicker
		cancel()
		return e.srv
	}
	if len(h.servers) >= maxIdleServers {
		h.evictIdle()
	}
	h.servers[id] = &entry{srv: srv, cancel: cancel}
	return srv
}

// evictIdle drops the servers without a session.
func (h *handler) evictIdle() {
	for id, e := range h.servers {
		idle := true
		for range e.srv.Sessions() {
			idle = false
			break
		}
		if idle {
			e.cancel()
			delete(h.servers, id)
		}
	}
}
