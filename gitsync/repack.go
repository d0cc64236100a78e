package gitsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/quirehq/quire/internal/flock"
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

// Repack consolidates the repository with `git repack --geometric=2`:
// the small packs (one per commit) and the loose objects are rolled into
// one pack, so that there are few packs, each at least twice the size of
// the ones after it. It holds none of the repository's locks while git
// runs, so commits and pushes go on meanwhile.
//
// git only adds the new pack (no -d): the packs it made redundant, and
// loose objects now in a pack, are deleted here, under the storage lock,
// and the pack list is re-read before the lock is released. So no read
// ever finds a pack gone that its pack list still names. With -d, git
// itself deleted them while this process (or a restarted one, when the
// daemon was killed and its git repack ran on) read with an older list:
// reads failed with "packfile not found" until a retry happened to see
// the new list.
//
// git runs holding an flock on quire-repack.lock in the repository
// (inherited, so the lock lives as long as git does, also when this
// process is killed): while a repack left running by another process
// holds it, Repack does nothing, and temporary files are not swept.
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
	r.repackMu.Lock()
	defer r.repackMu.Unlock()
	lock, err := takeRepackLock(r.st.refs.commonDir)
	if err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	if lock == nil {
		return nil // another process's repack runs: it does the work
	}
	defer lock.Close()
	before, err := listPacks(r.st.packDir)
	if err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	written := r.st.packs.Load()
	if err := r.runRepack(ctx, lock); err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	r.st.packs.Add(-written)
	if err := r.dropRedundant(before); err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	return nil
}

// runRepack runs git repack --geometric=2 (without -d) holding lock.
// When git fails, its temporary packs go at once (git itself removes
// them only in gc, after two weeks), under the lock, which stays held
// meanwhile: git and every process it starts inherit the lock and the
// write end of a pipe, so the pipe reads to its end once they are all
// gone and nothing of git's writes any more. When ctx ends first (git
// was killed; what it started may run on), the temporary packs are left
// to RemoveTemporaries.
func (r *Repository) runRepack(ctx context.Context, lock *os.File) error {
	gone, held, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("git repack: %w", err)
	}
	cmd := backgroundGit(ctx, "repack", "-q", "--geometric=2")
	cmd.Dir = r.st.refs.commonDir
	cmd.Env = gitEnv("GIT_DIR=" + r.st.refs.commonDir)
	cmd.WaitDelay = 5 * time.Second
	cmd.ExtraFiles = []*os.File{lock, held}
	out, err := cmd.CombinedOutput()
	held.Close()
	if err == nil {
		gone.Close()
		return nil
	}
	if allGone(ctx, gone) {
		removeTemporaries(r.st.packDir, 0, isGitTemporary)
	}
	return fmt.Errorf("git repack: %w: %s", err, oneLine(strings.TrimSpace(string(out))))
}

// allGone waits until the read end of a pipe reads to its end (every
// process that held its write end is gone), and reports whether that
// came before ctx ended. It closes the pipe.
func allGone(ctx context.Context, pipe *os.File) bool {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, pipe)
		pipe.Close()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// repackLockName is the file in a repository's common directory that a
// running repack holds an flock on.
const repackLockName = "quire-repack.lock"

// takeRepackLock opens the repository's repack lock and locks it; nil
// when another open file holds the lock (a repack of another process, or
// one left running by a process that was killed).
func takeRepackLock(commonDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(commonDir, repackLockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the repack lock: %w", err)
	}
	held, err := flock.TryLock(f)
	if err != nil || held {
		f.Close()
		return nil, err
	}
	return f, nil
}

// packExtensions are the files of a pack, the index first: without it
// neither git nor go-git sees the others.
var packExtensions = []string{".idx", ".pack", ".rev", ".bitmap", ".mtimes", ".promisor"}

// dropRedundant deletes the packs of before (those there when the repack
// began) whose every object is in another pack that stays, and the loose
// objects that are in a pack, under the storage lock; then go-git
// re-reads the pack directory.
//
// Indexes are read without the lock: packs only appear meanwhile (a
// commit's, a push's), which can only make an object look rarer than it
// is, never drop a pack whose objects are nowhere else.
func (r *Repository) dropRedundant(before []string) error {
	dir := r.st.packDir
	looseAt := looseObjects(filepath.Join(r.st.refs.commonDir, "objects"))
	drop, count, err := redundantPacks(dir, before, maps.Keys(looseAt))
	if err != nil {
		return err
	}
	var loose []string
	for h, file := range looseAt {
		if count[h] > 0 {
			loose = append(loose, file)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	errs := removeRedundant(dir, drop, loose)
	if len(drop) > 0 {
		if err := syncDir(dir); err != nil {
			errs = append(errs, err)
		}
		// Let go of the dropped packs' descriptors (the others reopen
		// on demand).
		_ = r.st.Close()
	}
	r.reindex()
	return errors.Join(errs...)
}

// redundantPacks returns the packs of before in dir whose every object is
// in a pack that stays, and how many of the staying packs hold each of
// their objects and each of also (the loose objects). It counts only
// those objects: a history's every object in a map was the largest
// thing a daemon under appends held while it repacked.
func redundantPacks(dir string, before []string, also iter.Seq[plumbing.Hash]) ([]string, map[plumbing.Hash]int, error) {
	now, err := listPacks(dir)
	if err != nil {
		return nil, nil, err
	}
	type cand struct {
		base string
		size int64
		idx  *packIndex
	}
	count := map[plumbing.Hash]int{}
	for h := range also {
		count[h] = 0
	}
	var cands []cand
	var others []string
	for _, base := range now {
		_, keep := os.Stat(filepath.Join(dir, base+".keep"))
		fi, err := os.Stat(filepath.Join(dir, base+".pack"))
		if !slices.Contains(before, base) || keep == nil || err != nil {
			others = append(others, base)
			continue
		}
		idx, err := readPackIndex(filepath.Join(dir, base+".idx"))
		if err != nil {
			continue // a damaged index counts for nothing and stays (Verify names it)
		}
		cands = append(cands, cand{base, fi.Size(), idx})
		for _, h := range idx.hashes {
			count[h] = 0
		}
	}
	if len(count) == 0 {
		return nil, count, nil
	}
	for _, c := range cands {
		for _, h := range c.idx.hashes {
			count[h]++
		}
	}
	for _, base := range others {
		names, err := readPackNames(filepath.Join(dir, base+".idx"))
		if err != nil {
			continue
		}
		for h := range count {
			if names.contains(h) {
				count[h]++
			}
		}
	}
	// Smallest first; a pack is dropped only when each of its objects is
	// in a pack not dropped (so two copies of one pack lose one).
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.size, b.size) })
	var drop []string
	for _, c := range cands {
		if !slices.ContainsFunc(c.idx.hashes, func(h plumbing.Hash) bool { return count[h] < 2 }) {
			drop = append(drop, c.base)
			for _, h := range c.idx.hashes {
				count[h]--
			}
		}
	}
	return drop, count, nil
}

// removeRedundant deletes the files of the packs drop in dir and the
// loose objects loose, returning what went wrong (a file already gone is
// not wrong).
func removeRedundant(dir string, drop, loose []string) []error {
	var errs []error
	for _, base := range drop {
		for _, ext := range packExtensions {
			if err := os.Remove(filepath.Join(dir, base+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	for _, p := range loose {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errs
}

// looseObjects returns the loose objects under objects by hash, with
// their files.
func looseObjects(objects string) map[plumbing.Hash]string {
	des, err := os.ReadDir(objects)
	if err != nil {
		return nil
	}
	out := map[plumbing.Hash]string{}
	for _, de := range des {
		if len(de.Name()) != 2 || !de.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(objects, de.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			if h, ok := parseHash(de.Name() + f.Name()); ok {
				out[h] = filepath.Join(objects, de.Name(), f.Name())
			}
		}
	}
	return out
}
