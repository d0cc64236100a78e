package mcp

import (
	"context"
	"net/http"
	"strings"

	"github.com/quirehq/quire/daemon/api"
)

// headerKey carries a tool call's HTTP headers (streamable HTTP only).
type headerKey struct{}

// tokenAllows is Options.allowAgent for a handler that takes tokens:
// the call's bearer token must be allowed to use the agent.
func tokenAllows(tokens api.Tokens) func(h http.Header, agent string) bool {
	return func(h http.Header, agent string) bool {
		tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
		return ok && tok != "" && tokens.Allows(tok, agent)
	}
}

// authorizeTeam refuses a team append (memory_append agents) naming an
// agent the caller's token may not use. A session over stdio or the
// unix socket trusts its caller, as the local API does; one over a
// listener with tokens must carry a token for each agent named.
func (s *server) authorizeTeam(ctx context.Context, agents []string) error {
	if s.allowAgent == nil || len(agents) == 0 {
		return nil
	}
	h, _ := ctx.Value(headerKey{}).(http.Header)
	for _, a := range agents {
		if h == nil || !s.allowAgent(h, a) {
			return api.Errorf(api.CodeForbidden, "this token may not use agent %q, which the team append names", a)
		}
	}
	return nil
}
