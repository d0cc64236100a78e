package gitsync

import (
	"errors"
	"fmt"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// LooseObjects counts the repository's loose objects. go-git writes only
// loose objects (the daemon's commits, accepted pushes), so this grows
// until Repack.
func (r *Repository) LooseObjects() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	los, ok := r.repo.Storer.(storer.LooseObjectStorer)
	if !ok {
		return 0, nil
	}
	n := 0
	err := los.ForEachObjectHash(func(plumbing.Hash) error { n++; return nil })
	if err != nil {
		return 0, fmt.Errorf("count loose objects in %s: %w", r.path, err)
	}
	return n, nil
}

// pruneGrace is how old an unreachable loose object must be before Repack
// deletes it.
const pruneGrace = time.Hour

// Repack packs every object reachable from a ref into one new pack,
// deletes the old packs and the loose objects now packed, and prunes
// unreachable loose objects older than an hour (commits that lost a
// compare-and-swap). It holds the writer lock throughout, so no commit or
// push runs meanwhile.
//
// Only bare repositories are repacked: in a work tree, objects reachable
// only from the index would be lost.
func (r *Repository) Repack() error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg, err := r.repo.Config()
	if err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	if !cfg.Core.IsBare {
		return fmt.Errorf("repack %s: not a bare repository", r.path)
	}
	refs, err := r.repo.Storer.IterReferences()
	if err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	hasRef := false
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			hasRef = true
		}
		return nil
	})
	if !hasRef {
		return nil // an empty repository: nothing to pack
	}
	r.reindex()
	if err := r.repo.RepackObjects(&gogit.RepackConfig{}); err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	r.reindex()
	err = r.repo.Prune(gogit.PruneOptions{
		OnlyObjectsOlderThan: time.Now().Add(-pruneGrace),
		Handler:              r.repo.DeleteObject,
	})
	if err != nil && !errors.Is(err, gogit.ErrLooseObjectsNotSupported) {
		return fmt.Errorf("prune %s: %w", r.path, err)
	}
	return nil
}
