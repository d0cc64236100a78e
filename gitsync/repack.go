package gitsync

import (
	"bytes"
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
	return r.repack(ctx, func(ctx context.Context, lock *os.File, before []string) ([]string, error) {
		return before, r.runRepack(ctx, lock, nil, "repack", "-q", "--geometric=2")
	})
}

// RollUp rolls the small packs up into one, as Repack does, but never a
// pack of more than rollUpMax objects, and it reads only the packs it
// rolls up (see rollUpObjects) and the loose objects: its work is
// bounded however long the history, so it can run as often as packs
// arrive (one per commit) and few pile up meanwhile. Repack, which can
// rewrite the whole history, is for the periodic maintenance.
func (r *Repository) RollUp(ctx context.Context) error {
	return r.repack(ctx, func(ctx context.Context, lock *os.File, before []string) ([]string, error) {
		roll, err := rollUpSet(r.st.packDir, before, rollUpMax)
		if err != nil || len(roll) < 2 {
			return nil, err
		}
		list, err := rollUpObjects(r.st.packDir, roll, maps.Keys(looseObjects(filepath.Join(r.st.refs.commonDir, "objects"))), &r.st.paths)
		if err != nil {
			return nil, err
		}
		packBase := filepath.Join(r.st.packDir, "pack")
		return roll, r.runRepack(ctx, lock, bytes.NewReader(list), "pack-objects", "-q", "--delta-base-offset", rollUpWindow, "--non-empty", packBase)
	})
}

// rollUpWindow is the delta search window of a roll-up (git's default
// is 10). A roll-up's packs seldom hold a log's previous version (it is
// in an older pack, and packs on disk cannot refer to objects of other
// packs), so most of its objects stay whole and are searched again by
// every later roll-up that takes their pack in; at 100,000 appends
// git's search was a third of the daemon's CPU. On a roll-up of 53,469
// objects a window of 3 took 1.26 s of CPU where 10 took 3.33 s, for a
// pack of 27.4 MB instead of 24.0 MB (33,057 objects: 0.43 s against
// 0.82 s, 11.0 MB against 9.7 MB).
const rollUpWindow = "--window=3"

// rollUpMax is the most objects a pack RollUp rolls up may have.
// Rolling up about as many objects took git about a second.
const rollUpMax = 1 << 15

// rollUpSet chooses the packs of dir (of before, without a .keep file)
// that RollUp rolls up, as git repack --geometric=2 chooses them by
// their object counts (so that the packs left and the new one form a
// geometric progression), leaving out those of more than most objects.
// One pack alone is not rolled up (nil).
func rollUpSet(dir string, before []string, most int64) ([]string, error) {
	type pack struct {
		base string
		n    int64
	}
	var packs []pack
	for _, base := range before {
		if _, err := os.Stat(filepath.Join(dir, base+".keep")); err == nil {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, base+".idx"))
		if err != nil {
			continue // gone since listed
		}
		if n := idxObjects(fi.Size()); n <= most {
			packs = append(packs, pack{base, n})
		}
	}
	slices.SortFunc(packs, func(a, b pack) int { return cmp.Compare(a.n, b.n) })
	// git's split: every pack below the largest one with fewer than
	// twice the objects of the pack before it, then each next one while
	// it has fewer than twice the objects of those rolled up together.
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if packs[i].n < 2*packs[i-1].n {
			split = i + 1
			break
		}
	}
	var sum int64
	for _, p := range packs[:split] {
		sum += p.n
	}
	for split < len(packs) && packs[split].n < 2*sum {
		sum += packs[split].n
		split++
	}
	if split < 2 {
		return nil, nil
	}
	roll := make([]string, split)
	for i, p := range packs[:split] {
		roll[i] = p.base
	}
	return roll, nil
}

// idxObjects is about how many objects a version 2 pack index of size
// bytes indexes: a header and fan-out table, 28 bytes an object, the
// two checksums (offsets past 2 GiB, 8 bytes more each, are ignored).
func idxObjects(size int64) int64 {
	return max(0, size-8-256*4-2*20) / 28
}

// repack runs git (roll: it returns the packs of before it rolled up)
// holding the repack lock and repackMu, then deletes the packs of those
// that are redundant (see dropRedundant); the packs of before it did not
// roll up stay and are not read.
func (r *Repository) repack(ctx context.Context, roll func(ctx context.Context, lock *os.File, before []string) ([]string, error)) error {
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
	rolled, err := roll(ctx, lock, before)
	if err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	r.st.packs.Add(-written)
	if len(rolled) == 0 {
		return nil
	}
	stay := slices.DeleteFunc(slices.Clone(before), func(base string) bool { return slices.Contains(rolled, base) })
	if err := r.dropRedundant(rolled, stay); err != nil {
		return fmt.Errorf("repack %s: %w", r.path, err)
	}
	return nil
}

// runRepack runs git with args (git repack without -d, or git
// pack-objects writing into the pack directory; stdin: its input)
// holding lock. When git fails, its temporary packs go at once (git itself removes
// them only in gc, after two weeks), under the lock, which stays held
// meanwhile: git and every process it starts inherit the lock and the
// write end of a pipe, so the pipe reads to its end once they are all
// gone and nothing of git's writes any more. When ctx ends first (git
// was killed; what it started may run on), the temporary packs are left
// to RemoveTemporaries.
func (r *Repository) runRepack(ctx context.Context, lock *os.File, stdin io.Reader, args ...string) error {
	gone, held, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	cmd := backgroundGit(ctx, args...)
	cmd.Stdin = stdin
	cmd.Dir = r.st.refs.commonDir
	cmd.Env = gitEnv("GIT_DIR=" + r.st.refs.commonDir)
	cmd.WaitDelay = 5 * time.Second
	cmd.ExtraFiles = []*os.File{lock, held}
	var out bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &out, n: 4 << 10}
	err = cmd.Run()
	held.Close()
	if err == nil {
		gone.Close()
		return nil
	}
	if allGone(ctx, gone) {
		removeTemporaries(r.st.packDir, 0, isGitTemporary)
	}
	return fmt.Errorf("git %s: %w: %s", args[0], err, oneLine(strings.TrimSpace(out.String())))
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
// began that it rolled up) whose every object is in another pack that
// stays, and the loose objects that are in a pack, under the storage
// lock; then go-git re-reads the pack directory. The packs of stay (there
// when the repack began, not rolled up) are not read: they stay, and a
// roll-up's new pack holds every object of the packs it rolled up, so
// reading them (a check of each whole index) would only make a roll-up's
// time grow with the history.
//
// Indexes are read without the lock: packs only appear meanwhile (a
// commit's, a push's), which can only make an object look rarer than it
// is, never drop a pack whose objects are nowhere else.
func (r *Repository) dropRedundant(before, stay []string) error {
	dir := r.st.packDir
	looseAt := looseObjects(filepath.Join(r.st.refs.commonDir, "objects"))
	drop, packed, err := redundantPacks(dir, before, stay, maps.Keys(looseAt))
	if err != nil {
		return err
	}
	var loose []string
	for h, file := range looseAt {
		if packed[h] {
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
// in a pack that stays, and which objects of also (the loose objects)
// are in a pack that stays; the packs of stay are not read (which can
// only keep a pack that could go). Objects are looked up in each index as it
// lies on disk (checked whole first: a damaged index counts for nothing
// and its pack stays, Verify names it), without a copy of any index nor
// a map of their objects: a map of every object of the packs rolled up
// was the largest thing a daemon under appends held while it repacked.
func redundantPacks(dir string, before, stay []string, also iter.Seq[plumbing.Hash]) ([]string, map[plumbing.Hash]bool, error) {
	now, err := listPacks(dir)
	if err != nil {
		return nil, nil, err
	}
	type pack struct {
		base    string
		size    int64
		idx     *diskIndex
		dropped bool
	}
	var cands, others []*pack
	for _, base := range now {
		if slices.Contains(stay, base) {
			continue
		}
		idx, err := openCheckedIndex(filepath.Join(dir, base+".idx"))
		if err != nil {
			continue
		}
		_, keep := os.Stat(filepath.Join(dir, base+".keep"))
		fi, err := os.Stat(filepath.Join(dir, base+".pack"))
		if !slices.Contains(before, base) || keep == nil || err != nil {
			others = append(others, &pack{base: base, idx: idx})
			continue
		}
		cands = append(cands, &pack{base: base, size: fi.Size(), idx: idx})
	}
	// The packs that stay for sure first, the largest first: the pack
	// the repack wrote holds most objects.
	slices.SortFunc(others, func(a, b *pack) int { return b.idx.n - a.idx.n })
	all := slices.Concat(others, cands)
	elsewhere := func(h plumbing.Hash, self *pack) bool {
		return slices.ContainsFunc(all, func(p *pack) bool { return p != self && !p.dropped && p.idx.search(h) >= 0 })
	}
	// Smallest first; a pack is dropped only when each of its objects is
	// in a pack not dropped (so two copies of one pack lose one).
	slices.SortFunc(cands, func(a, b *pack) int { return cmp.Compare(a.size, b.size) })
	var drop []string
	for _, c := range cands {
		redundant := true
		for i := 0; i < c.idx.n && redundant; i++ {
			redundant = elsewhere(c.idx.hash(i), c)
		}
		if redundant {
			c.dropped = true
			drop = append(drop, c.base)
		}
	}
	packed := map[plumbing.Hash]bool{}
	for h := range also {
		packed[h] = elsewhere(h, nil)
	}
	return drop, packed, nil
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
