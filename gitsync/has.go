package gitsync

import (
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// HasCommit reports whether the repository holds the commit with the
// full hex hash h. Unlike Resolve, a miss is not retried with the pack
// index reloaded: asking about a commit another writer made, which may
// not be here yet, is cheap.
func (r *Repository) HasCommit(h string) bool {
	hash, ok := parseHash(h)
	if !ok {
		return false
	}
	found := false
	_ = r.locked(func(st storer.EncodedObjectStorer) error {
		_, err := object.GetCommit(st, hash)
		found = err == nil
		return nil
	})
	return found
}
