package gitsync

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// LooseObjects counts the repository's loose objects (older versions
// wrote one file per object; this one writes packs).
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

// PacksWritten is the number of packs this process added to the
// repository (one per commit, push or fetch) since the last Repack.
func (r *Repository) PacksWritten() int64 { return r.st.packs.Load() }

// Repack consolidates the repository with `git repack -d --geometric=2`:
// the small packs (one per commit) and the loose objects are rolled into
// one pack, so that there are few packs, each at least twice the size of
// the ones after it. It holds none of the repository's locks, so commits
// and pushes go on meanwhile: git never deletes a pack it did not roll
// up, packs written during the repack are left alone, and objects are
// never dropped (unreachable ones are kept, which also keeps objects a
// concurrent push is about to reference). Reads that miss a removed pack
// re-read the pack directory.
//
// Only bare repositories are repacked.
func (r *Repository) Repack() error {
	return r.RepackContext(context.Background())
}

// RepackContext is Repack with a context that stops git.
func (r *Repository) RepackContext(ctx context.Context) error {
	var bare bool
	err := r.locked(func(storer.EncodedObjectStorer) error {
		cfg, err := r.repo.Config()
		if err != nil {
			return err
		}
		bare = cfg.Core.IsBare
		return nil
	})
	if err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	if !bare {
		return fmt.Errorf("repack %s: not a bare repository", r.path)
	}
	before := r.st.packs.Load()
	cmd := backgroundGit(ctx, "repack", "-d", "-q", "--geometric=2")
	cmd.Dir = r.st.refs.commonDir
	cmd.Env = gitEnv("GIT_DIR=" + r.st.refs.commonDir)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("repack %s: git repack: %w: %s", r.path, err, oneLine(strings.TrimSpace(string(out))))
	}
	r.st.packs.Add(-before)
	r.mu.Lock()
	r.reindex()
	r.mu.Unlock()
	return nil
}
