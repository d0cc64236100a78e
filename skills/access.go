package skills

import "slices"

// Visibility is who may use a skill of the shared skills repository; its
// SKILL.md says it in the visibility key of the front matter.
type Visibility string

// Visibilities. The empty Visibility means Public.
const (
	// Public skills are seen by every agent that loads them, and by a
	// request that names no agent.
	Public Visibility = "public"
	// Internal skills are seen by every agent of the daemon (the
	// organisation) that loads them, never by a request naming no agent.
	Internal Visibility = "internal"
	// Private skills are seen only by the agents the grants file names,
	// directly or by their repository.
	Private Visibility = "private"
)

// Visibilities returns the visibilities a SKILL.md may name.
func Visibilities() []Visibility { return []Visibility{Public, Internal, Private} }

// Grant names who may use a private skill: agents by name, and every
// agent of a repository by the repository's name.
type Grant struct {
	Agents       []string `json:"agents,omitempty" yaml:"agents"`
	Repositories []string `json:"repositories,omitempty" yaml:"repositories"`
}

// Access is a skill's access record: its front matter's visibility and
// its grant in the repository's grants file. The zero value is public.
type Access struct {
	Visibility Visibility `json:"visibility,omitempty"`
	Grant      Grant      `json:"grant,omitzero"`
}

// public reports whether a allows every request.
func (a Access) public() bool { return a.Visibility == "" || a.Visibility == Public }

// Allows reports whether the request may see a skill with access a. An
// unknown visibility allows nobody, so a typo never publishes a skill.
func (a Access) Allows(r *Request) bool {
	switch a.Visibility {
	case "", Public:
		return true
	case Internal:
		return r.Agent != ""
	case Private:
		return r.Agent != "" && (slices.Contains(a.Grant.Agents, r.Agent) ||
			r.Repo != "" && slices.Contains(a.Grant.Repositories, r.Repo))
	}
	return false
}

// Request says who is asking and which skills the agent is configured to
// use. The zero Request sees every public skill.
type Request struct {
	Agent string
	// Repo is the name of the repository that defines the agent, which a
	// grant may name; "" for an agent of no repository.
	Repo string
	User string
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
	if !s.Access.Allows(r) {
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
