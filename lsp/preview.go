package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// PreviewArgs are the arguments of quire.previewPrompt. The command takes
// either one object with these fields or the positional strings agent,
// user, session, channel. An empty agent is taken from URI (the document the
// preview is for), else the workspace's only agent.
type PreviewArgs struct {
	Agent   string `json:"agent,omitempty"`
	User    string `json:"user,omitempty"`
	Session string `json:"session,omitempty"` // main (default), subagent, cron
	Mode    string `json:"mode,omitempty"`    // full, task, minimal, none (default: the session's)
	Channel string `json:"channel,omitempty"` // dm (default), group
	Room    string `json:"room,omitempty"`
	// URI names the document the preview is asked from.
	URI string `json:"uri,omitempty"`
	// Now is an RFC 3339 time for the Current Time section and the daily
	// logs; empty means the server's clock.
	Now string `json:"now,omitempty"`
}

// parsePreviewArgs reads the command's arguments in either form.
func parsePreviewArgs(raw []protocol.LSPAny) (PreviewArgs, error) {
	var args PreviewArgs
	if len(raw) == 0 {
		return args, nil
	}
	if first := strings.TrimSpace(string(raw[0])); strings.HasPrefix(first, "{") {
		if err := json.Unmarshal(raw[0], &args); err != nil {
			return args, fmt.Errorf("arguments: %w", err)
		}
		return args, nil
	}
	fields := []*string{&args.Agent, &args.User, &args.Session, &args.Channel}
	for i, r := range raw {
		if i >= len(fields) {
			break
		}
		if strings.TrimSpace(string(r)) == "null" {
			continue
		}
		if err := json.Unmarshal(r, fields[i]); err != nil {
			return args, fmt.Errorf("argument %d: want a string: %w", i+1, err)
		}
	}
	return args, nil
}

// errBadArgument marks a preview argument the server cannot use.
var errBadArgument = errors.New("bad argument")

// request turns the arguments into a prompt request against a, filling the
// agent and user from the document when they are not given.
func (s *server) previewRequest(a *analysis, root string, args PreviewArgs) (prompt.Request, error) {
	req := prompt.Request{
		Agent: args.Agent, User: args.User, Session: prompt.Session(args.Session), Mode: prompt.Mode(args.Mode), Channel: prompt.Channel(args.Channel), Room: args.Room,
		Now: s.now(),
	}
	if args.Now != "" {
		now, err := time.Parse(time.RFC3339, args.Now)
		if err != nil {
			return req, fmt.Errorf("%w: now: want an RFC 3339 time such as 2026-11-23T09:30:00Z: %w", errBadArgument, err)
		}
		req.Now = now
	}
	if args.URI != "" && (req.Agent == "" || req.User == "") {
		s.mu.Lock()
		p := s.relPath(uri.URI(args.URI))
		s.mu.Unlock()
		if pl, ok := a.locate(p); ok && p != "" {
			if req.Agent == "" {
				req.Agent = pl.agent.Name
			}
			if req.User == "" && pl.agent.Name == req.Agent {
				req.User = pl.user
			}
		}
	}
	return req, nil
}

// preview assembles the prompt the arguments ask for from the editor's
// view of the workspace: exactly what the daemon would serve once the
// buffers are saved and committed.
func (s *server) preview(args PreviewArgs) (prompt.Result, error) {
	v := s.currentView()
	a := s.analyses.of(v.fsys)
	if a.err != nil {
		return prompt.Result{}, a.err
	}
	req, err := s.previewRequest(a, v.root, args)
	if err != nil {
		return prompt.Result{}, err
	}
	ag, err := a.ws.Agent(req.Agent)
	if err != nil {
		return prompt.Result{}, err
	}
	if err := invalidAgent(ag); err != nil {
		return prompt.Result{}, err
	}
	req.Agent = ag.Name
	set := a.skillsOf(ag, v.root, s.home, s.skillsDir)
	req.Skills = set.PromptSkills(skills.Request{Agent: ag.Name, User: req.User, Allow: ag.Config.Skills})
	return a.ws.Assemble(req)
}

// ExecuteCommand implements protocol.Server.
func (s *server) ExecuteCommand(ctx context.Context, params *protocol.ExecuteCommandParams) (protocol.LSPAny, error) {
	switch params.Command {
	case CommandPreviewPrompt:
		args, err := parsePreviewArgs(params.Arguments)
		if err != nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "quire.previewPrompt: "+err.Error())
		}
		res, err := s.preview(args)
		if err != nil {
			code := jsonrpc2.InternalError
			if errors.Is(err, prompt.ErrBadRequest) || errors.Is(err, prompt.ErrUnknownAgent) || errors.Is(err, errBadArgument) {
				code = jsonrpc2.InvalidParams
			}
			if errors.Is(err, errInvalidAgent) {
				code = codeRequestFailed
			}
			return nil, jsonrpc2.NewError(code, "quire.previewPrompt: "+err.Error())
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encode preview: %w", err)
		}
		return protocol.LSPAny(b), nil
	}
	return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("unknown command %q; this server runs %s", params.Command, strings.Join(commands, ", ")))
}
