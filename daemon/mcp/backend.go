package mcp

import (
	"context"
	"log/slog"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// Backend is what the MCP server calls: the local API's operations, in
// process (Local) or over the socket or TCP (Remote). Errors are
// *api.Error where the API has a code for them.
type Backend interface {
	Agents(ctx context.Context) ([]api.Agent, error)
	Prompt(ctx context.Context, agent string, req api.PromptRequest) (api.PromptResponse, error)
	MemorySearch(ctx context.Context, agent string, req api.SearchRequest) (api.SearchResponse, error)
	MemoryAppend(ctx context.Context, agent string, req api.AppendRequest) (api.WriteResponse, error)
	ReadFile(ctx context.Context, agent, user, path string) (api.File, error)
	// WriteFile writes path; ifMatch is never empty ("*" creates).
	WriteFile(ctx context.Context, agent, user, path, ifMatch string, content []byte) (api.WriteResponse, error)
	SkillsSearch(ctx context.Context, agent string, req api.SkillsSearchRequest) (api.SkillsResponse, error)
	Skill(ctx context.Context, agent, user, name string) (api.SkillBody, error)
	// Subscribe delivers the daemon's events until ctx is done; the
	// channel is closed then, or when the daemon shuts down.
	Subscribe(ctx context.Context) <-chan api.Event
}

// LocalBackend is the daemon in process: its api.Backend, and its
// prompts answered typed.
type LocalBackend interface {
	api.Backend
	Prompt(ctx context.Context, agent string, req api.PromptRequest) (api.PromptResponse, error)
}

// Local adapts the daemon in process; the operations whose signatures
// agree are the backend's own.
func Local(b LocalBackend) Backend { return local{b} }

type local struct{ LocalBackend }

func (l local) Agents(ctx context.Context) ([]api.Agent, error) {
	return l.LocalBackend.Agents(ctx), nil
}

// Remote adapts a client of a running daemon: the client's operations,
// but for the order of arguments. Its event subscription reconnects
// (every second) while the daemon is away; log may be nil.
func Remote(c *client.Client, log *slog.Logger) Backend {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return remote{Client: c, log: log}
}

type remote struct {
	*client.Client
	log *slog.Logger
}

func (r remote) ReadFile(ctx context.Context, agent, user, path string) (api.File, error) {
	return r.Client.ReadFile(ctx, agent, path, user)
}

func (r remote) WriteFile(ctx context.Context, agent, user, path, ifMatch string, content []byte) (api.WriteResponse, error) {
	return r.Client.WriteFile(ctx, agent, path, user, ifMatch, content)
}

func (r remote) Skill(ctx context.Context, agent, user, name string) (api.SkillBody, error) {
	return r.Client.Skill(ctx, agent, name, user)
}

func (r remote) Subscribe(ctx context.Context) <-chan api.Event {
	ch := make(chan api.Event, 16)
	go func() {
		defer close(ch)
		for first := true; ctx.Err() == nil; first = false {
			if !first {
				// Back after a break: whatever was deployed meanwhile
				// went unannounced, so announce a deploy of every agent
				// once the daemon answers again.
				if _, err := r.Client.Agents(ctx); err == nil {
					select {
					case ch <- api.Event{Type: "deploy", Time: time.Now().UTC(), Message: "reconnected to the daemon"}:
					case <-ctx.Done():
						return
					}
				} else {
					select {
					case <-ctx.Done():
						return
					case <-time.After(time.Second):
					}
					continue
				}
			}
			err := r.Client.Events(ctx, func(e api.Event) bool {
				select {
				case ch <- e:
					return true
				case <-ctx.Done():
					return false
				}
			})
			if ctx.Err() != nil {
				return
			}
			r.log.Debug("daemon event stream ended; reconnecting", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return ch
}
