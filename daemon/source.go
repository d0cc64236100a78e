package daemon

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/gitsync"
)

type sourceKind string

const (
	kindRepo     sourceKind = "repo"
	kindUpstream sourceKind = "upstream"
	kindDir      sourceKind = "dir"
)

// source is one source of truth: a hosted repository, a followed upstream
// or a working tree. Every agent knows its source. Besides what names it,
// a source holds the state each part keeps of it, and each of those has
// one owner that writes it; the others call its methods:
//
//   - deploys, the deployed revision: the deployer's (deployState);
//   - index, what the memory store holds: the indexer's (indexState);
//   - writes, the writes under way: the writer's (writeState);
//   - up, the followed upstream and whether it answers: its own
//     (upstream; nil for the other kinds).
type source struct {
	kind     sourceKind
	name     string // repository name, upstream URL or directory
	rootName string // the agent name of a repository without agent.yaml
	repo     *gitsync.Repository
	refs     []string // the deployed ref, first that resolves
	dir      string

	deploys deployState
	index   indexState
	writes  writeState
	up      *upstream
}

func (s *source) id() string { return string(s.kind) + ":" + s.name }

// head resolves the deployed ref.
func (s *source) head() (plumbing.Hash, string, error) {
	var last error
	for _, r := range s.refs {
		h, err := s.repo.Resolve(r)
		if err == nil {
			return h, r, nil
		}
		last = err
	}
	return plumbing.ZeroHash, s.refs[0], last
}

// holds reports whether commit is the deployed ref's commit or an
// ancestor of it (a walk of the history from the head: the commit is
// usually near it).
func (s *source) holds(commit string) bool {
	head, _, err := s.head()
	if err != nil {
		return false
	}
	ok, err := s.repo.IsAncestor(commit, head.String())
	return err == nil && ok
}

// knows reports whether the repository has commit (a lookup, no walk).
func (s *source) knows(commit string) bool { return s.repo.HasCommit(commit) }
