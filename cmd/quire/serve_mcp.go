package main

import (
	"flag"

	"github.com/quirehq/quire/daemon/mcp"
)

// mcpSessionFlags are quire serve's bounds on MCP sessions.
type mcpSessionFlags struct{ lim mcp.SessionLimits }

func (f *mcpSessionFlags) define(fs *flag.FlagSet) {
	fs.IntVar(&f.lim.PerToken, "mcp-sessions-per-token", mcp.DefaultSessionsPerToken, "at most `n` MCP sessions open at once per --token-file token")
	fs.IntVar(&f.lim.Total, "mcp-sessions", mcp.DefaultSessions, "at most `n` MCP sessions open at once, on the socket and --api-listen together")
	fs.DurationVar(&f.lim.Idle, "mcp-session-idle", mcp.DefaultSessionIdle, "close an MCP session after `duration` without a request")
}
