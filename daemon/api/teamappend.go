package api

import (
	"net/http"
	"strings"
)

// authorizeAgents refuses a request that names agents (a team append)
// its bearer token may not use: each one is written to, as the route's
// agent is.
func (h *handler) authorizeAgents(r *http.Request, agents []string) error {
	if h.opts.Tokens == nil || len(agents) == 0 {
		return nil
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	for _, a := range agents {
		if !h.opts.Tokens.Allows(token, a) {
			return Errorf(CodeForbidden, "this token may not use agent %q, which the team append names", a)
		}
	}
	return nil
}
