package mcp

import (
	"context"
	"net/url"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// PromptName is the MCP prompt that carries the system prompt.
const PromptName = "system_prompt"

func (s *server) addPrompt() {
	s.srv.AddPrompt(&sdk.Prompt{
		Name:  PromptName,
		Title: "System prompt of agent " + s.id.Agent,
		Description: "The system prompt Quire assembles for agent " + s.id.Agent +
			" (identity, skills, memory recall, the workspace's context files), byte for byte what `quire prompt` and the local API return. Use it as the model's system prompt.",
		Arguments: []*sdk.PromptArgument{
			{Name: "user", Description: "the user the conversation is with (default: this session's user)"},
			{Name: "session", Description: "main (default), subagent or cron"},
			{Name: "mode", Description: "full, task, minimal or none (default: full for main, minimal for subagent and cron)"},
			{Name: "channel", Description: "dm (default, a private chat) or group"},
			{Name: "context_window", Description: "the model's context window in tokens: the context files' total budget becomes context_share of it, in tokens"},
			{Name: "context_share", Description: "the share of context_window the context files may take (default: agent.yaml's budget.context_share, else 0.25)"},
		},
	}, s.getPrompt)
}

func (s *server) getPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	args := req.Params.Arguments
	user := args["user"]
	switch {
	case user == "":
		user = s.id.User
	case s.id.User != "" && user != s.id.User:
		return nil, api.Errorf(api.CodeForbidden, "this session acts for user %q; it cannot assemble user %q's prompt", s.id.User, user)
	}
	preq := api.PromptRequest{User: user, Session: prompt.Session(args["session"]), Mode: prompt.Mode(args["mode"]), Channel: prompt.Channel(args["channel"])}
	if err := windowArgs(args, &preq); err != nil {
		return nil, err
	}
	res, err := s.b.Prompt(ctx, s.id.Agent, preq)
	if err != nil {
		return nil, err // rpcErrors gives it its JSON-RPC code
	}
	return &sdk.GetPromptResult{
		Description: "System prompt of agent " + s.id.Agent + " at commit " + res.Commit,
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: res.Prompt}}},
	}, nil
}

// listedFiles are the workspace files listed as resources when they
// exist (agent-level, and the session user's own); any other file is
// reachable through the resource template.
var listedFiles = []string{
	workspace.AgentsFile, workspace.SoulFile, workspace.ToolsFile, workspace.IdentityFile, workspace.UserFile,
	workspace.UserPredefinedFile, workspace.HeartbeatFile, workspace.BootstrapFile, workspace.MemoryFile, workspace.MemoryFallbackFile,
	workspace.ConfigFile,
}

// uriPrefix is quire://<agent>/.
func (s *server) uriPrefix() string { return "quire://" + url.PathEscape(s.id.Agent) + "/" }

// userDir is users/<encoded user>/ of the session's user, or "".
func (s *server) userDir() string {
	if s.id.User == "" {
		return ""
	}
	enc, err := workspace.EncodeID(s.id.User)
	if err != nil {
		return ""
	}
	return workspace.UsersDir + "/" + enc + "/"
}

// resolve maps a resource URI to the user and path to read: a path under
// users/ must be the session user's own directory.
func (s *server) resolve(uri string) (user, p string, err error) {
	rest, ok := strings.CutPrefix(uri, s.uriPrefix())
	if !ok {
		return "", "", api.Errorf(api.CodeNotFound, "resource %s: this session serves quire://%s/<path> only", uri, s.id.Agent)
	}
	if rest, err = url.PathUnescape(rest); err != nil {
		return "", "", api.Errorf(api.CodeBadPath, "resource %s: %v", uri, err)
	}
	if dir := s.userDir(); dir != "" {
		if own, ok := strings.CutPrefix(rest, dir); ok {
			if _, err := checkPath(own); err != nil {
				return "", "", err
			}
			return s.id.User, own, nil
		}
	}
	if _, err := checkPath(rest); err != nil {
		return "", "", err
	}
	return "", rest, nil
}

func (s *server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	user, p, err := s.resolve(uri)
	if err != nil {
		return nil, err
	}
	f, err := s.b.ReadFile(ctx, s.id.Agent, user, p)
	if err != nil {
		return nil, err // rpcErrors gives it its JSON-RPC code
	}
	// The ETag rides along for memory_write's if_match.
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mimeType(p), Text: f.Content,
		Meta: sdk.Meta{"etag": f.ETag, "commit": f.Commit}}}}, nil
}

func mimeType(p string) string {
	switch {
	case strings.HasSuffix(p, ".md"):
		return "text/markdown"
	case strings.HasSuffix(p, ".yaml"), strings.HasSuffix(p, ".yml"):
		return "application/yaml"
	}
	return "text/plain"
}

// probe reads the listed files and returns their URIs and ETags.
func (s *server) probe(ctx context.Context) (map[string]string, error) {
	found := map[string]string{}
	scopes := []string{""}
	if s.id.User != "" {
		scopes = append(scopes, s.id.User)
	}
	for _, user := range scopes {
		prefix := s.uriPrefix()
		if user != "" {
			prefix += s.userDir()
		}
		for _, name := range listedFiles {
			f, err := s.b.ReadFile(ctx, s.id.Agent, user, name)
			if err != nil {
				code := errCode(err)
				if code == "not_found" || code == "virtual_file" {
					continue
				}
				return nil, err
			}
			found[prefix+name] = f.ETag
		}
	}
	return found, nil
}

// addResources lists the workspace files and registers the template for
// every other file.
func (s *server) addResources(ctx context.Context) {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "workspace-file",
		Title:       "A file of agent " + s.id.Agent + "'s workspace",
		Description: "Any file of the workspace by its path, e.g. memory/2026-01-31.md or skills/<name>/SKILL.md" + s.userHint(),
		URITemplate: s.uriPrefix() + "{+path}",
		MIMEType:    "text/markdown",
	}, s.readResource)
	if err := s.sync(ctx, false); err != nil {
		s.log.Warn("mcp: listing workspace files failed", "agent", s.id.Agent, "err", err)
	}
}

func (s *server) userHint() string {
	if dir := s.userDir(); dir != "" {
		return "; this session's user's own files are under " + dir
	}
	return ""
}

// sync brings the resource list to the workspace and, when notify is set,
// tells subscribers of every listed file whose content changed.
func (s *server) sync(ctx context.Context, notify bool) error {
	found, err := s.probe(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	var added, removed, changed []string
	for uri, etag := range found {
		old, ok := s.etags[uri]
		switch {
		case !ok:
			added = append(added, uri)
		case old != etag:
			changed = append(changed, uri)
		}
	}
	for uri := range s.etags {
		if _, ok := found[uri]; !ok {
			removed = append(removed, uri)
		}
	}
	s.etags = found
	s.mu.Unlock()
	sort.Strings(added)
	for _, uri := range added {
		name := strings.TrimPrefix(uri, s.uriPrefix())
		s.srv.AddResource(&sdk.Resource{URI: uri, Name: name, Title: s.id.Agent + ": " + name, MIMEType: mimeType(name)}, s.readResource)
	}
	if len(removed) > 0 {
		s.srv.RemoveResources(removed...)
	}
	if !notify {
		return nil
	}
	for _, uri := range append(append(changed, added...), removed...) {
		if err := s.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Debug("mcp: resource update notification failed", "uri", uri, "err", err)
		}
	}
	return nil
}

// watch follows the backend's events and syncs the resources after each
// deploy or write of the session's agent. When the event stream ends
// because the daemon shuts down, every session of the server is closed,
// so that open streams do not hold the shutdown up.
func (s *server) watch(ctx context.Context) {
	ch := s.b.Subscribe(ctx)
	for ev := range ch {
		if ev.Agent != "" && ev.Agent != s.id.Agent || ev.Type != "deploy" && ev.Type != "write" {
			continue
		}
		// Collapse a burst of events into one sync.
	drain:
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					break drain
				}
			default:
				break drain
			}
		}
		if err := s.sync(ctx, true); err != nil && ctx.Err() == nil {
			s.log.Warn("mcp: re-listing workspace files failed", "agent", s.id.Agent, "err", err)
		}
	}
	if ctx.Err() == nil {
		for ss := range s.srv.Sessions() {
			ss.Close()
		}
	}
}
