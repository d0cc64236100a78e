package mcp

import (
	"strconv"

	"github.com/quirehq/quire/daemon/api"
)

// windowArgs reads the system_prompt arguments context_window (tokens)
// and context_share (0..1) into req; MCP prompt arguments are strings.
func windowArgs(args map[string]string, req *api.PromptRequest) error {
	if s := args["context_window"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return api.Errorf(api.CodeBadRequest, "context_window %q is not a whole number of tokens", s)
		}
		req.ContextWindow = n
	}
	if s := args["context_share"]; s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return api.Errorf(api.CodeBadRequest, "context_share %q is not a number between 0 and 1", s)
		}
		req.ContextShare = f
	}
	return nil
}
