package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// prompter answers prompt requests: it assembles an agent's prompt from
// the deployed revision and keeps the answer in the deployment's
// promptCache, by agent, day and request, so that a repeated request
// costs a lookup. The local API gets answers encoded (PromptJSON, and
// AnsweredPrompt before it decodes a request), MCP typed (Prompt);
// neither sees the cache. A new user reads their seed
// files virtually (seedFS).
type prompter struct {
	sources *sourceSet
	now     func() time.Time
}

// AnsweredPrompt implements api.PromptAnswers: the answer an identical
// request got today from the deployed revision, or nil.
func (p *prompter) AnsweredPrompt(agent string, body []byte) []byte {
	ref, err := p.sources.agent(agent)
	if err != nil {
		return nil
	}
	var kb [512]byte
	return ref.dep.prompts.lookup(promptKey(kb[:0], ref, p.now(), body)).encoded
}

// PromptJSON implements api.Backend: the answer to req encoded, kept by
// body (as it arrived) for AnsweredPrompt.
func (p *prompter) PromptJSON(ctx context.Context, agent string, req api.PromptRequest, body []byte) ([]byte, error) {
	ref, err := p.sources.agent(agent)
	if err != nil {
		return nil, err
	}
	today := p.now() // one reading: the key's day is the prompt's
	var kb [512]byte
	key := promptKey(kb[:0], ref, today, body)
	if b := ref.dep.prompts.lookup(key).encoded; b != nil {
		return b, nil
	}
	res, err := p.assemble(ref, req, today)
	if err != nil {
		return nil, err
	}
	b, err := api.Encode(res)
	if err != nil {
		return nil, err
	}
	ref.dep.prompts.keep(string(key), promptEntry{encoded: b})
	return b, nil
}

// Prompt answers a prompt request typed (MCP's backend, in process).
func (p *prompter) Prompt(ctx context.Context, agent string, req api.PromptRequest) (api.PromptResponse, error) {
	ref, err := p.sources.agent(agent)
	if err != nil {
		return api.PromptResponse{}, err
	}
	today := p.now()
	body, err := json.Marshal(req)
	if err != nil {
		return api.PromptResponse{}, err
	}
	var kb [512]byte
	key := promptKey(kb[:0], ref, today, body)
	if res := ref.dep.prompts.lookup(key).typed; res != nil {
		return *res, nil
	}
	res, err := p.assemble(ref, req, today)
	if err != nil {
		return api.PromptResponse{}, err
	}
	ref.dep.prompts.keep(string(key), promptEntry{typed: &res})
	return res, nil
}

// assemble assembles the prompt req asks for from ref's deployment;
// today is the daemon's clock, the prompt's "now" unless req sets one.
func (p *prompter) assemble(ref agentRef, req api.PromptRequest, today time.Time) (api.PromptResponse, error) {
	now := today
	if req.Now != nil {
		now = *req.Now
	}
	if req.User != "" {
		// A new user's files are served virtually (seedFS) until their
		// first write stores them: a prompt read does not write.
		if _, err := workspace.EncodeID(req.User); err != nil {
			return api.PromptResponse{}, badRequest("user %q: %v", req.User, err)
		}
	}
	agent := ref.ag.agent.Name
	sreq := ref.ag.userRequest(req.User)
	if req.Skills != nil {
		sreq.Filter = req.Skills
	}
	res, err := ref.dep.ws.Assemble(prompt.Request{
		Agent: agent, User: req.User, Session: req.Session, Mode: req.Mode, Channel: req.Channel, Room: req.Room,
		Tools: req.Tools, Extra: req.Extra, VirtualFiles: req.VirtualFiles, Now: now,
		Skills:        ref.ag.skills.PromptSkills(sreq),
		ContextWindow: req.ContextWindow, ContextShare: req.ContextShare,
	})
	if err != nil {
		return api.PromptResponse{}, assembleError(err)
	}
	return api.PromptResponse{Prompt: res.Prompt, Report: res.Report, Commit: ref.dep.commit}, nil
}

// assembleError gives an assembly's error its API code.
func assembleError(err error) error {
	switch {
	case errors.Is(err, prompt.ErrBadRequest) || errors.Is(err, workspace.ErrBadID):
		// The code says "bad request" already.
		return badRequest("%s", strings.TrimPrefix(err.Error(), prompt.ErrBadRequest.Error()+": "))
	case errors.Is(err, prompt.ErrUnknownAgent):
		return api.Errorf(api.CodeUnknownAgent, "%v", err)
	case errors.Is(err, workspace.ErrSymlink) || errors.Is(err, workspace.ErrNotRegular):
		return api.Errorf(api.CodeUnreadable, "%v", err)
	}
	return err
}

// promptKey appends the prompt cache key of a request to dst: the agent,
// today in the agent's time zone (the prompt names the day) and the
// body, which holds the caller's "now" when it sets one.
func promptKey(dst []byte, ref agentRef, now time.Time, body []byte) []byte {
	loc := ref.ag.agent.Config.Location
	if loc == nil {
		loc = time.UTC
	}
	dst = append(dst, ref.ag.agent.Name...)
	dst = append(dst, 0)
	dst = now.In(loc).AppendFormat(dst, time.DateOnly)
	dst = append(dst, 0)
	return append(dst, body...)
}
