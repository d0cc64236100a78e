package mcp

import (
	"context"
	"sync"

	"github.com/quirehq/quire/daemon/api"
)

// fakeBackend serves agent alpha with the files in files (agent-level
// by path, a user's as "user:path"), for tests of the protocol that need
// no daemon.
type fakeBackend struct {
	mu    sync.Mutex
	files map[string]string
}

func (f *fakeBackend) Agents(context.Context) ([]api.Agent, error) {
	return []api.Agent{{Name: "alpha"}}, nil
}

func (f *fakeBackend) Prompt(_ context.Context, _ string, req api.PromptRequest) (api.PromptResponse, error) {
	if req.Session != "" && req.Session != "main" {
		return api.PromptResponse{}, api.Errorf(api.CodeBadRequest, "bad request: session %q is unknown; use main, subagent or cron", req.Session)
	}
	return api.PromptResponse{Prompt: "You are alpha.", Commit: "c0ffee"}, nil
}

func (f *fakeBackend) MemorySearch(context.Context, string, api.SearchRequest) (api.SearchResponse, error) {
	return api.SearchResponse{}, nil
}

func (f *fakeBackend) MemoryAppend(context.Context, string, api.AppendRequest) (api.WriteResponse, error) {
	return api.WriteResponse{}, nil
}

func (f *fakeBackend) key(user, path string) string {
	if user != "" {
		return user + ":" + path
	}
	return path
}

func (f *fakeBackend) ReadFile(_ context.Context, agent, user, path string) (api.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.files[f.key(user, path)]
	if !ok {
		return api.File{}, api.Errorf(api.CodeNotFound, "agent %q has no file %s", agent, path)
	}
	return api.File{Content: c, ETag: `"` + c + `"`}, nil
}

func (f *fakeBackend) WriteFile(_ context.Context, _, user, path, ifMatch string, content []byte) (api.WriteResponse, error) {
	return api.WriteResponse{Path: path}, nil
}

func (f *fakeBackend) SkillsSearch(context.Context, string, api.SkillsSearchRequest) (api.SkillsResponse, error) {
	return api.SkillsResponse{}, nil
}

func (f *fakeBackend) Skill(context.Context, string, string, string) (api.SkillBody, error) {
	return api.SkillBody{}, api.Errorf(api.CodeUnknownSkill, "no skill")
}

func (f *fakeBackend) Subscribe(ctx context.Context) <-chan api.Event {
	ch := make(chan api.Event)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch
}
