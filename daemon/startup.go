package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/flock"
)

// checkGit refuses a start whose sources run the git CLI (hosted
// repositories, an upstream) when git is missing from PATH or older than
// gitsync.MinGitVersion: pushes would fail later with "unpacker error"
// and clones with git's "check your access rights".
func checkGit(ctx context.Context, opts Options, log *slog.Logger) error {
	var who, why string
	switch {
	case opts.ReposDir != "":
		who, why = "--repos "+opts.ReposDir, "fetches, pushed packs, repacks"
	case opts.Upstream != "":
		who, why = "--upstream "+opts.Upstream, "fetch, push"
	default:
		return nil
	}
	v, err := gitsync.CheckGit(ctx)
	if err != nil {
		return fmt.Errorf("%s runs git (%s): %w", who, why, err)
	}
	log.Debug("git CLI", "version", v)
	return nil
}

// reposLockFile is the lock file a daemon holds in its --repos directory.
const reposLockFile = ".quire-serve.lock"

// reposLock is a daemon's hold on its --repos directory: an exclusive
// lock (internal/flock) on the lock file there, which holds the daemon's pid. The kernel
// drops the lock when the process ends however it ends, so a file left
// by a crash never blocks the next start.
type reposLock struct{ f *os.File }

// reposHeldError is a --repos directory another daemon holds.
type reposHeldError struct {
	Dir  string
	File string // the lock file
	PID  int    // the holder's pid (0 when it has not written it yet)
}

func (e *reposHeldError) Error() string {
	holder := "another quire serve"
	if e.PID > 0 {
		holder = fmt.Sprintf("another quire serve (pid %d)", e.PID)
	}
	return fmt.Sprintf("--repos %s is in use by %s: two daemons on one directory would serve stale data; stop it, or give this one another --repos (lock file %s)", e.Dir, holder, e.File)
}

// lockRepos takes dir (creating it, private, when it is missing) for
// this process, or returns a *reposHeldError naming the holder.
func lockRepos(dir string) (*reposLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--repos %s: %w", dir, err)
	}
	path := filepath.Join(dir, reposLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--repos %s: lock: %w", dir, err)
	}
	held, err := tryLockAwhile(f, time.Sleep)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--repos %s: %w", dir, err)
	}
	if held {
		defer f.Close()
		b, _ := os.ReadFile(path)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return nil, &reposHeldError{Dir: dir, File: path, PID: pid}
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--repos %s: write lock file %s: %w", dir, path, err)
	}
	return &reposLock{f: f}, nil
}

// lockRetries is how many times, doubling the wait from lockRetryWait,
// lockRepos tries a lock that is held before it says so (about 0.6 s in
// all): a lock its holder just released can stay held for a moment by a
// child process forked before the release and not yet replaced by its
// program (git, run by any goroutine), which has a copy of the lock's
// descriptor until then.
const (
	lockRetries   = 7
	lockRetryWait = 5 * time.Millisecond
)

// tryLockAwhile is flock.TryLock, tried again for a moment while the lock
// is held, pausing between tries.
func tryLockAwhile(f *os.File, pause func(time.Duration)) (held bool, err error) {
	wait := lockRetryWait
	for range lockRetries {
		if held, err = flock.TryLock(f); !held || err != nil {
			return held, err
		}
		pause(wait)
		wait *= 2
	}
	return flock.TryLock(f)
}

// release lets another daemon take the directory; nil-safe.
func (l *reposLock) release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close() // closing the last descriptor drops the flock
	l.f = nil
}
