package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// searchDaemon runs a memory search on a running daemon. It reports
// done = false, so the caller builds the embedded index instead, when no
// daemon answers on the socket.
func searchDaemon(ctx context.Context, e *env, o *searchOptions, query string) (bool, error) {
	sock := daemonSocket(o.socket, e)
	conn, err := net.DialTimeout("unix", sock, 300*time.Millisecond)
	if err != nil {
		if o.socket != "" {
			return true, fmt.Errorf("no daemon answers on %s: %w", sock, err)
		}
		return false, nil
	}
	conn.Close()
	// Say where the answer comes from: the daemon's deployed commit, not
	// the files in the current directory.
	fmt.Fprintf(e.stderr, "quire search: asking the daemon on %s (its deployed memory; --local searches the files here)\n", sock)
	c := &client.Client{Socket: sock}
	agent := o.agent
	if agent == "" {
		agents, err := c.Agents(ctx)
		if err != nil {
			return true, err
		}
		if len(agents) != 1 {
			var names []string
			for _, a := range agents {
				names = append(names, a.Name)
			}
			return true, usagef("the daemon on %s serves %d agents (%s): choose one with --agent", sock, len(agents), strings.Join(names, ", "))
		}
		agent = agents[0].Name
	}
	now, err := o.nowTime()
	if err != nil {
		return true, err
	}
	req := api.SearchRequest{Query: query, User: o.user, Limit: o.limit, MinScore: o.minScore, TextWeight: o.weight(), Context: o.context}
	if !now.IsZero() {
		req.Now = &now
	}
	res, err := c.MemorySearch(ctx, agent, req)
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.Code == "unknown_agent" {
		return true, fmt.Errorf("%s (asked the daemon on %s; --local searches the working tree instead)", apiErr.Message, sock)
	}
	if err != nil {
		return true, err
	}
	if o.json {
		return true, writeJSON(e.stdout, struct {
			Agent  string       `json:"agent"`
			Query  string       `json:"query"`
			Commit string       `json:"commit"`
			Hits   []memory.Hit `json:"hits"`
		}{agent, query, res.Commit, res.Hits})
	}
	if len(res.Hits) == 0 {
		fmt.Fprintf(e.stderr, "no memory matches %q (searched by the daemon on %s)\n", query, sock)
		return true, exitError{exitFindings}
	}
	for _, h := range res.Hits {
		loc := h.Path
		if h.User != "" {
			if enc, err := workspace.EncodeID(h.User); err == nil {
				loc = workspace.UsersDir + "/" + enc + "/" + h.Path
			}
		}
		fmt.Fprintf(e.stdout, "%s:%s:%d-%d  %.3f  %s\n", agent, loc, h.StartLine, h.EndLine, h.Score, h.Scope)
		printHitText(e, h)
	}
	return true, nil
}
