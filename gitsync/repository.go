package gitsync

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repository is one git repository on disk, bare or with a work tree,
// opened through go-git. It is safe for concurrent use: go-git's object
// storage is not, so every object read goes through one lock, and every
// write (the daemon's commits, pushes) through a second, writer lock.
type Repository struct {
	path string
	repo *gogit.Repository
	st   *gitStorage

	// mu guards the go-git object storage (its pack index and caches are
	// not safe for concurrent use).
	mu sync.Mutex
	// writeMu makes the repository single-writer: commits and pushes
	// hold it from reading the old ref value to moving the ref. It is
	// granted in arrival order, so pushes from followers and the daemon's
	// own commits take turns.
	writeMu QueueLock
	// fetchMu makes fetches from an upstream one at a time (see
	// Follower.Fetch); it is never held with writeMu waiting on it.
	fetchMu QueueLock
	// repackMu makes repacks one at a time (see RepackContext).
	repackMu sync.Mutex
	// ver is what Verify remembers between checks.
	ver verifyState

	// trees caches decoded trees for snapshots.
	trees treeCache

	// liveHosts remembers, per remote URL, whether it is a quire host
	// that decides writes on live itself (see PushCAS).
	liveHosts sync.Map
	// sp is the native send-pack's state (see sendLive).
	sp sendPackState
	// merge is the merge policy of MergeMain and MergeOn (the Host's,
	// for a hosted repository; nil: line by line).
	merge MergePolicy
}

// objectCacheSize is how many bytes of inflated objects a repository
// keeps: the trees a commit rewrites and the blobs just read. More made
// no measurable difference to CPU under appends (pack reads stay about
// 3 % of it).
const objectCacheSize = 4 << 20

// maxOpenPacks is how many pack files a repository keeps open for reads
// (the least recently used is closed first).
const maxOpenPacks = 16

// Open opens the git repository at path: a bare repository, a .git
// directory, or any directory inside a work tree (the .git directory is
// found by walking up).
func Open(path string) (*Repository, error) {
	// A bare repository or a work tree's root opens directly; a directory
	// deeper in a work tree needs the walk up to its .git.
	r, err := gogit.PlainOpenWithOptions(path, &gogit.PlainOpenOptions{EnableDotGitCommonDir: true})
	if errors.Is(err, gogit.ErrRepositoryNotExists) {
		r, err = gogit.PlainOpenWithOptions(path, &gogit.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", path, err)
	}
	fsSt, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return nil, fmt.Errorf("open git repository %s: unexpected storage %T", path, r.Storer)
	}
	gitDir, commonDir, err := locateGitDir(path)
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", path, err)
	}
	// The same storage, reading loose objects only (and alternates'):
	// the packs are read by a packSet, which keeps a few pack files open
	// (by default go-git opens, maps and closes the pack for every
	// object it reads, which was a fifth of a busy host's CPU) and reads
	// their indexes in place (go-git's MemoryIndexes were a third of a
	// restarted daemon's heap). The object cache holds objectCacheSize,
	// not go-git's 96 MiB: the default filled up as history grew and
	// made a daemon under appends hold half again what it holds after a
	// restart.
	st := newObjectReader(fsSt.Filesystem(), filepath.Join(commonDir, "objects", "pack"), objectCacheSize)
	st.refs = &refStore{gitDir: gitDir, commonDir: commonDir}
	if err := os.MkdirAll(st.packDir, 0o755); err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", path, err)
	}
	var wt billy.Filesystem
	if w, err := r.Worktree(); err == nil {
		wt = w.Filesystem
	}
	r, err = gogit.Open(st, wt)
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", path, err)
	}
	removeStaleTemporaries(commonDir, st.packDir, staleAtOpen, staleAtOpen)
	return &Repository{path: path, repo: r, st: st}, nil
}

// Check reports the repository's broken refs (an empty or garbled ref
// file, as a crash of an older version left them), each a
// *BrokenRefError naming the ref; nil when every ref is readable.
func (r *Repository) Check() error {
	if err := r.st.refs.check(); err != nil {
		return fmt.Errorf("repository %s: %w", r.path, err)
	}
	return nil
}

// Path is the path the repository was opened with.
func (r *Repository) Path() string { return r.path }

// Git is the underlying go-git repository. Callers that use it directly
// bypass the repository's locks and must not run concurrently with it.
func (r *Repository) Git() *gogit.Repository { return r.repo }

// store is the object storage; callers hold r.mu.
func (r *Repository) store() storer.EncodedObjectStorer { return r.repo.Storer }

// reindex makes the next read list the pack directory again, so that
// packs written or removed by another process (git gc, git repack) are
// seen. Callers hold r.mu.
func (r *Repository) reindex() {
	r.st.reindex()
}

// withStore runs fn with the object storage under the storage lock. When
// fn fails because an object is missing, go-git re-reads the pack
// directory and fn runs once more: another process (git fetch, git
// index-pack, a push of another daemon) may have added a pack. A pack
// never vanishes under a read: repacks delete packs under this lock (see
// RepackContext), and a pack is not listed before its index is there
// (see listPacks).
func (r *Repository) withStore(fn func(storer.EncodedObjectStorer) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := fn(r.store())
	if err != nil && isNotFound(err) {
		r.reindex()
		err = fn(r.store())
	}
	return err
}

// locked runs fn with the object storage under the storage lock, without
// the retry of withStore (for lookups where a miss is normal).
func (r *Repository) locked(fn func(storer.EncodedObjectStorer) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fn(r.store())
}

func isNotFound(err error) bool {
	return isMissing(err) || errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound)
}

// Resolve resolves a revision (HEAD, a branch or tag name, a full ref
// name, a full or abbreviated commit hash, or anything else go-git's
// ResolveRevision accepts) to a commit hash.
func (r *Repository) Resolve(rev string) (plumbing.Hash, error) {
	var h plumbing.Hash
	err := r.withStore(func(storer.EncodedObjectStorer) error {
		// go-git's ResolveRevision reports a damaged ref as missing (an
		// empty repository); look at the ref names rev may mean first.
		for _, n := range []string{rev, "refs/" + rev, "refs/heads/" + rev, "refs/tags/" + rev} {
			if n != "HEAD" && !validRefName(plumbing.ReferenceName(n)) {
				continue
			}
			if _, err := r.st.refs.read(plumbing.ReferenceName(n)); errors.Is(err, ErrBrokenRef) {
				return err
			}
		}
		p, err := r.repo.ResolveRevision(plumbing.Revision(rev))
		switch {
		case errors.Is(err, io.EOF):
			// go-git walks ~N and ^N off the end of the history as EOF.
			return &UnknownRevisionError{Rev: rev, Repo: r.path, Why: "it goes back past the first commit"}
		case errors.Is(err, plumbing.ErrReferenceNotFound), errors.Is(err, plumbing.ErrObjectNotFound):
			return &UnknownRevisionError{Rev: rev, Repo: r.path, Why: "no branch, tag or commit is named so"}
		case err != nil:
			return err
		}
		h = *p
		return nil
	})
	var unknown *UnknownRevisionError
	if errors.As(err, &unknown) {
		return plumbing.ZeroHash, err
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("resolve revision %q in %s: %w", rev, r.path, err)
	}
	return h, nil
}

// UnknownRevisionError is a revision that names no commit of a
// repository. It is a plumbing.ErrReferenceNotFound.
type UnknownRevisionError struct {
	Rev, Repo string
	Why       string // "it goes back past the first commit"
}

func (e *UnknownRevisionError) Error() string {
	return fmt.Sprintf("revision %q is not in %s: %s; name a branch, a tag or a commit that git log shows", e.Rev, e.Repo, e.Why)
}

// Unwrap makes the error a plumbing.ErrReferenceNotFound.
func (e *UnknownRevisionError) Unwrap() error { return plumbing.ErrReferenceNotFound }

// Snapshot resolves rev and returns that commit's tree as a file system.
// Nothing is checked out; files are read from the object database.
func (r *Repository) Snapshot(rev string) (*Snapshot, error) {
	h, err := r.Resolve(rev)
	if err != nil {
		return nil, err
	}
	return r.SnapshotOf(h)
}

// SnapshotOf returns the tree of the commit with hash h as a file system.
func (r *Repository) SnapshotOf(h plumbing.Hash) (*Snapshot, error) {
	var s *Snapshot
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		var err error
		s, err = newSnapshot(st, h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s in %s: %w", h, r.path, err)
	}
	s.repo = r
	s.access = r.withStore
	return s, nil
}

// RefNames returns the full names of the references that start with
// prefix (e.g. "refs/heads/proposals/concierge/"), sorted.
func (r *Repository) RefNames(prefix string) ([]string, error) {
	var names []string
	err := r.withStore(func(storer.EncodedObjectStorer) error {
		iter, err := r.repo.References()
		if err != nil {
			return err
		}
		defer iter.Close()
		return iter.ForEach(func(ref *plumbing.Reference) error {
			if n := ref.Name().String(); strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list refs %s* in %s: %w", prefix, r.path, err)
	}
	sort.Strings(names)
	return names, nil
}
