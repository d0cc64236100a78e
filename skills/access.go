package skills

import "slices"

// Visibility is who may see a managed skill.
type Visibility string

// Visibilities (seed §12). The empty Visibility means Public.
const (
	Public   Visibility = "public"
	Private  Visibility = "private"  // the owner only
	Internal Visibility = "internal" // the owner and explicit agent or user grants
)

// AgentGrant lets one agent use an internal skill, optionally pinned to a
// version of it.
type AgentGrant struct {
	Agent string `json:"agent"`
	// Version pins the skill version the agent sees; 0 means the latest.
	Version int `json:"version,omitempty"`
}

// Access is a skill's access record. The zero value is public.
type Access struct {
	Visibility  Visibility   `json:"visibility,omitempty"`
	Owner       string       `json:"owner,omitempty"`
	AgentGrants []AgentGrant `json:"agent_grants,omitempty"`
	UserGrants  []string     `json:"user_grants,omitempty"`
}

// Allows reports whether agent, serving user (empty for no user), may see a
// skill with access a. Private skills are seen by their owner only; internal
// skills by their owner, granted users and granted agents. An unknown
// visibility allows nobody, so a typo never publishes a skill.
func (a Access) Allows(agent, user string) bool {
	switch a.Visibility {
	case "", Public:
		return true
	case Private:
		return user != "" && user == a.Owner
	case Internal:
		if user != "" && (user == a.Owner || slices.Contains(a.UserGrants, user)) {
			return true
		}
		_, ok := a.grant(agent)
		return ok
	}
	return false
}

// PinnedVersion returns the version agent's grant pins, if it pins one.
func (a Access) PinnedVersion(agent string) (int, bool) {
	g, ok := a.grant(agent)
	if !ok || g.Version == 0 {
		return 0, false
	}
	return g.Version, true
}

func (a Access) grant(agent string) (AgentGrant, bool) {
	if agent == "" {
		return AgentGrant{}, false
	}
	for _, g := range a.AgentGrants {
		if g.Agent == agent {
			return g, true
		}
	}
	return AgentGrant{}, false
}

// Request says who is asking and which skills the agent is configured to
// use. The zero Request sees every public skill.
type Request struct {
	Agent string
	User  string
	// Allow is the agent.yaml allow list: nil = every skill, an empty
	// non-nil slice = none.
	Allow []string
	// Filter, when non-nil, replaces Allow for this request (same
	// semantics: empty non-nil = none).
	Filter []string
}

// Permits reports whether the request may see s: the access rules first,
// then the per-request filter, or the allow list when there is no filter.
func (r *Request) Permits(s *Skill) bool {
	if !s.Access.Allows(r.Agent, r.User) {
		return false
	}
	list := r.list()
	return list == nil || slices.Contains(list, s.Slug)
}

// list returns the list in effect: Filter when set, else Allow.
func (r *Request) list() []string {
	if r.Filter != nil {
		return r.Filter
	}
	return r.Allow
}
