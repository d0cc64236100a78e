package lsp

import (
	"time"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// requestsFor are the assemblies the diagnostics of the file at p come
// from: its agent's (place.request), or, for a file of the repository's
// _shared/ directory, which belongs to no agent, every agent's private
// main session (the first whose report holds the file diagnoses it).
func (a *analysis) requestsFor(p string, now time.Time) []prompt.Request {
	if workspace.IsSharedContextFile(p) {
		var out []prompt.Request
		for _, ag := range a.ws.Agents() {
			out = append(out, prompt.Request{Agent: ag.Name, Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now})
		}
		return out
	}
	pl, ok := a.locate(p)
	if !ok {
		return nil
	}
	return []prompt.Request{pl.request(now)}
}
