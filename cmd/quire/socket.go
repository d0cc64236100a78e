package main

import "github.com/quirehq/quire/daemon/api"

// daemonSocket is a command's --socket flag, or the daemon's default
// socket ($XDG_RUNTIME_DIR/quire/quire.sock).
func daemonSocket(flagValue string, e *env) string {
	if flagValue != "" {
		return flagValue
	}
	return api.DefaultSocket(e.getenv)
}
