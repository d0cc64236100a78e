// Package mcp serves the daemon's memory, skills and system prompt over
// the Model Context Protocol, built on the official Go SDK: six tools
// (memory_search, memory_get, memory_append, memory_write, skill_search,
// skill_get), the system prompt as the prompt "system_prompt", and the
// agent's workspace files as resources quire://<agent>/<path> with change
// notifications after a deploy or a write.
//
// One MCP server serves one identity: an agent and, optionally, a user,
// fixed when the session starts (flags of `quire mcp`, the query of
// /mcp). No tool takes an agent or a user, so a session never reaches
// another agent's files, nor another user's. Errors are tool errors whose
// text is the local API's error body, {"error":{"code","message"}};
// those of prompts and resources are JSON-RPC errors (rpcerrors.go).
//
// The package calls a Backend: the daemon in process (Local), or a
// running daemon through daemon/client (Remote).
package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon/api"
)

// Identity is whom a session acts for.
type Identity struct {
	// Agent is the agent whose workspace the session uses.
	Agent string
	// User, when set, is the user whose own files the tools read and
	// write, besides the agent's; "" means agent-level files only.
	User string
}

// Options configure the MCP servers.
type Options struct {
	// Version is reported to clients as the server's version.
	Version string
	// Logger receives the servers' logs; nil discards.
	Logger *slog.Logger
	// Observe, when set, is told every request's route ("MCP
	// tools/call memory_search", "MCP prompts/get" …), status (200, or
	// the API's status of the error) and latency.
	Observe func(route string, status int, d time.Duration)
	// allowAgent, set by Handler when it takes bearer tokens, says
	// whether the token in a tool call's headers may use an agent: a team
	// append writes to the agents it names (teamappend.go).
	allowAgent func(h http.Header, agent string) bool
}

// NewServer returns an MCP server for id. It watches b's events for
// deploys and writes of id.Agent until ctx is done, to notify clients
// whose resources changed.
func NewServer(ctx context.Context, b Backend, id Identity, opts Options) *sdk.Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &server{b: b, id: id, log: opts.Logger, etags: map[string]string{}, allowAgent: opts.allowAgent}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "quire", Title: "Quire: agent " + id.Agent, Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions(id),
		Logger:       sdkLogger(opts.Logger),
		// Subscriptions are kept by the SDK; any resource may be watched.
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		HasPrompts:         true,
		HasResources:       true,
		HasTools:           true,
	})
	s.addTools()
	s.srv.AddReceivingMiddleware(apiErrors)
	if opts.Observe != nil {
		s.srv.AddReceivingMiddleware(observe(opts.Observe))
	}
	s.srv.AddReceivingMiddleware(rpcErrors) // outside observe, which counts API statuses
	s.addPrompt()
	s.addResources(ctx)
	go s.watch(ctx)
	return s.srv
}

// server is one identity's MCP server and its view of the workspace.
type server struct {
	b   Backend
	id  Identity
	log *slog.Logger
	srv *sdk.Server

	mu    sync.Mutex
	etags map[string]string // listed resource URI → ETag

	allowAgent func(h http.Header, agent string) bool // Options.allowAgent
}

func instructions(id Identity) string {
	s := "Quire keeps the workspace of agent " + id.Agent + ": its long-term memory (MEMORY.md and daily logs memory/YYYY-MM-DD.md), its skills and its system prompt. " +
		"Search memory with memory_search before answering questions about past conversations, people, preferences or decisions, and read more of a hit with memory_get. " +
		"Record durable facts with memory_append (today's daily log) or edit a memory file with memory_write (read it first: the etag is required). " +
		"Find instructions for a task with skill_search, then load one with skill_get."
	if id.User != "" {
		s += " This session acts for user " + id.User + ": their own files come first."
	}
	return s
}

// apiErrors gives the tool errors the SDK makes itself (arguments that
// do not match a tool's schema) the API's error body, code bad_request,
// like every other tool error.
func apiErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*sdk.CallToolResult)
		if err != nil || !ok || !r.IsError || r.StructuredContent != nil {
			return res, err
		}
		var msg strings.Builder
		for _, c := range r.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				msg.WriteString(t.Text)
			}
		}
		out, err := toolError(badRequest("%s", msg.String()))
		return out, err
	}
}

// sdkLogger is log for the SDK, whose INFO lines (a session connected, a
// resource subscribed) are routine: they are logged at DEBUG.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(demote{log.Handler()})
}

type demote struct{ slog.Handler }

func (d demote) level(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d demote) Enabled(ctx context.Context, l slog.Level) bool {
	return d.Handler.Enabled(ctx, d.level(l))
}

func (d demote) Handle(ctx context.Context, r slog.Record) error {
	r.Level = d.level(r.Level)
	return d.Handler.Handle(ctx, r)
}

func (d demote) WithAttrs(attrs []slog.Attr) slog.Handler { return demote{d.Handler.WithAttrs(attrs)} }

func (d demote) WithGroup(name string) slog.Handler { return demote{d.Handler.WithGroup(name)} }

type statusKey struct{}

// observe times every request and reports it with its status: a tool
// error's API status, 500 for a protocol error, else 200.
func observe(fn func(route string, status int, d time.Duration)) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			start := time.Now()
			status := http.StatusOK
			ctx = context.WithValue(ctx, statusKey{}, &status)
			res, err := next(ctx, method, req)
			route := "MCP " + method
			if r, ok := req.(*sdk.CallToolRequest); ok && r.Params != nil {
				route += " " + r.Params.Name
			}
			var apiErr *api.Error
			var rpcErr *jsonrpc.Error
			switch {
			case err == nil:
				if r, ok := res.(*sdk.CallToolResult); ok && r.IsError && status == http.StatusOK {
					status = http.StatusBadRequest // the SDK refused the arguments
				}
			case errors.As(err, &apiErr):
				status = api.StatusOf(apiErr)
			case errors.As(err, &rpcErr) && rpcErr.Code != jsonrpc.CodeInternalError:
				status = http.StatusBadRequest
			default:
				status = http.StatusInternalServerError
			}
			fn(route, status, time.Since(start))
			return res, err
		}
	}
}
