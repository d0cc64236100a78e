package gitsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// repairEvery is the least time between two attempts to fetch a damaged
// mirror again.
const repairEvery = time.Minute

// checkFetched is what Fetch does after every fetch (err is the fetch's
// outcome, updates the refs it moved): a failed fetch's temporary packs
// are removed (and those a crash left), the mirror is verified, damage is logged at ERROR when it
// is new, and a damaged mirror is fetched again whole from the upstream
// into a new repository that takes its place (the damaged one is moved
// aside). After such a repair it returns every ref of the new mirror as
// moved, and no error.
func (f *Follower) checkFetched(ctx context.Context, updates []RefUpdate, err error) ([]RefUpdate, error) {
	r := f.Repository
	if r.ver.copyOf != nil {
		return updates, err // a repair's fetch: checked once in place
	}
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err != nil {
		r.sweepTemporaries(0, isGitTemporary)
	}
	r.RemoveTemporaries() // what a killed daemon's fetch left
	d, _ := r.verifyLogged(ctx, log, "it is fetched again from the upstream", "repo", r.path)
	if d == nil {
		return updates, err
	}
	if time.Since(r.ver.lastRepair) < repairEvery {
		return updates, err
	}
	r.ver.lastRepair = time.Now()
	aside, all, rerr := f.refetch(ctx)
	if rerr != nil {
		log.Error("cannot fetch the damaged mirror again; retrying after the next fetch", "repo", r.path, "err", rerr)
		return updates, err
	}
	log.Warn("moved the damaged mirror aside and fetched it again from the upstream", "repo", r.path, "damaged_copy", aside, "refs", len(all))
	if verr := r.Verify(ctx, VerifyOptions{}); errors.As(verr, &d) {
		d.LogTo(log, "the upstream's copy is damaged too: repair it there", "repo", r.path)
	}
	return all, nil
}

// refetch fetches the upstream whole into a new repository next to the
// mirror and, once that worked, puts it in the mirror's place; the
// damaged mirror is moved aside (to aside; an older one aside is
// removed). Callers hold r.fetchMu (Fetch does).
func (f *Follower) refetch(ctx context.Context) (aside string, updates []RefUpdate, err error) {
	r := f.Repository
	dir := r.st.refs.commonDir
	fresh := dir + ".refetch"
	if err := os.RemoveAll(fresh); err != nil {
		return "", nil, err
	}
	if err := initBare(fresh); err != nil {
		return "", nil, fmt.Errorf("create %s: %w", fresh, err)
	}
	defer os.RemoveAll(fresh) // nothing left once it took the mirror's place
	if err := f.fetchInto(ctx, fresh); err != nil {
		return "", nil, err
	}

	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	aside, err = swapMirror(dir, fresh)
	if err != nil {
		return "", nil, err
	}
	r.forgetPacks()
	removeOlderAside(dir, aside)
	updates, err = r.mirroredRefs()
	if err != nil {
		return aside, nil, err
	}
	return aside, updates, nil
}

// fetchInto fetches the upstream into the new bare repository fresh with
// the same follower (its URL, credentials, refspecs, timeout).
func (f *Follower) fetchInto(ctx context.Context, fresh string) error {
	nr, err := Open(fresh)
	if err != nil {
		return err
	}
	nr.ver.copyOf = f.Repository
	nf := *f
	nf.Repository, nf.OnEvent, nf.OnFetch, nf.trigger = nr, nil, nil, make(chan struct{}, 1)
	_, err = nf.Fetch(ctx)
	nr.st.Close()
	return err
}

// swapMirror moves the mirror dir aside and fresh in its place, and
// returns where the damaged mirror went.
func swapMirror(dir, fresh string) (aside string, err error) {
	aside = fmt.Sprintf("%s.damaged-%s", dir, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(dir, aside); err != nil {
		return "", fmt.Errorf("move the damaged mirror aside: %w", err)
	}
	if err := os.Rename(fresh, dir); err != nil {
		if rerr := os.Rename(aside, dir); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return "", fmt.Errorf("put the new mirror in place: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return "", err
	}
	return aside, nil
}

// forgetPacks has go-git let go of the damaged packs and read the new
// ones, and drops what verification knew of the old. Callers hold r.mu.
func (r *Repository) forgetPacks() {
	_ = r.st.Close()
	r.reindex()
	r.st.packs.Store(0)
	r.ver.mu.Lock()
	r.ver.packs, r.ver.trees = nil, nil
	r.ver.mu.Unlock()
}

// removeOlderAside removes the damaged mirrors moved aside before aside.
func removeOlderAside(dir, aside string) {
	if olds, _ := filepath.Glob(dir + ".damaged-*"); len(olds) > 1 {
		for _, o := range olds {
			if o != aside {
				os.RemoveAll(o)
			}
		}
	}
}

// mirroredRefs is every ref of the mirror but the staging ones, as
// updates from nothing.
func (r *Repository) mirroredRefs() ([]RefUpdate, error) {
	refs, _, err := r.st.refs.list()
	if err != nil {
		return nil, err
	}
	var updates []RefUpdate
	for _, ref := range refs {
		if !strings.HasPrefix(ref.Name().String(), stagingPrefix) {
			updates = append(updates, RefUpdate{Name: ref.Name(), New: ref.Hash()})
		}
	}
	return updates, nil
}
