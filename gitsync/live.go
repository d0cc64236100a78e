package gitsync

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// The two branches of a workspace repository (HostOptions.Live): people
// write MainRef, the daemon writes LiveRef and deploys it.
const (
	MainRef = plumbing.ReferenceName("refs/heads/main")
	LiveRef = plumbing.ReferenceName("refs/heads/live")
)

// EnsureBranch creates branch name at the commit of from when name does
// not exist and from does (the upgrade of a repository that has main but
// no live yet). Nothing is rewritten. It reports whether it created the
// branch.
func (r *Repository) EnsureBranch(name, from plumbing.ReferenceName) (bool, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	created := false
	err := r.locked(func(storer.EncodedObjectStorer) error {
		cur, err := r.refValue(name)
		if err != nil || !cur.IsZero() {
			return err
		}
		src, err := r.refValue(from)
		if err != nil || src.IsZero() {
			return err
		}
		if err := r.setRef(name, plumbing.ZeroHash, src); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("create %s at %s in %s: %w", name, from, r.path, err)
	}
	return created, nil
}

// MergeConflictError is a merge of main into live that conflicts.
type MergeConflictError struct {
	Conflicts []MergeConflict
}

func (e *MergeConflictError) Error() string {
	var parts []string
	for _, c := range e.Conflicts {
		parts = append(parts, c.Path+": "+c.Why)
	}
	return "main does not merge into live: " + strings.Join(parts, "; ") + "; on main, git pull --no-rebase <url> live, resolve, commit, push main again"
}

// MergeMain merges main into live when live does not hold it yet: main
// moved outside the endpoint (pushed by file path while the daemon was
// down). The merge commit's first parent is live, its second main. It
// returns the new live (zero when live did not move); a conflict is a
// *MergeConflictError and nothing moves.
func (r *Repository) MergeMain(ctx context.Context) (plumbing.Hash, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	var out plumbing.Hash
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		main, err := r.refValue(MainRef)
		if err != nil {
			return err
		}
		live, err := r.refValue(LiveRef)
		if err != nil {
			return err
		}
		if main.IsZero() || live.IsZero() {
			return nil
		}
		m, p, err := mergeInto(ctx, st, r.merge, main, live)
		if err != nil || p == nil {
			return err
		}
		if err := r.st.writePending(p); err != nil {
			return err
		}
		if err := r.setRef(LiveRef, live, m); err != nil {
			return err
		}
		out = m
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge main into live in %s: %w", r.path, err)
	}
	return out, nil
}

// ByQuire reports whether commit h was made by a daemon: an agent's
// write or a merge of Quire's (the author's address is under
// quire.invalid). It is false when h cannot be read.
func (r *Repository) ByQuire(h plumbing.Hash) bool {
	var by bool
	_ = r.withStore(func(st storer.EncodedObjectStorer) error {
		c, err := object.GetCommit(st, h)
		if err != nil {
			return err
		}
		by = byQuire(c)
		return nil
	})
	return by
}
