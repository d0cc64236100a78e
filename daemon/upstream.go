package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sync/errgroup"

	"github.com/quirehq/quire/gitsync"
)

// upstreamLive and upstreamMain are an upstream's branches as fetched.
const (
	upstreamLive = plumbing.ReferenceName("refs/remotes/upstream/live")
	upstreamMain = plumbing.ReferenceName("refs/remotes/upstream/main")
)

// upstream is the part that follows an upstream (--upstream): the
// follower that fetches it into the source's mirror, the remote it
// pushes writes to, and the upstream's health, which status reports:
// whether it answered the last fetch and the last write, and since when
// it has not. It owns that health; the follower reports each fetch and
// the writer each write through its methods.
type upstream struct {
	remote   gitsync.Remote // its URL prints without the credential
	follower *gitsync.Follower
	log      *slog.Logger
	// fetched wakes run's follow-up when a fetch moved refs: size one,
	// so that a burst of fetches makes one follow-up.
	fetched chan struct{}

	mu       sync.Mutex
	fetchErr string // the last fetch's error ("" when it worked)
	writeErr string // the last write's error ("" when it worked)
	// answered is when the upstream last answered a fetch or took a
	// write: while it does not, what is served lags it by that much.
	answered time.Time
}

// newUpstream follows remote into repo, fetching every poll; a fetch
// gives up after fetchTimeout (0: gitsync's default).
func newUpstream(repo *gitsync.Repository, remote gitsync.Remote, poll, fetchTimeout time.Duration, log *slog.Logger) *upstream {
	u := &upstream{remote: remote, log: log, fetched: make(chan struct{}, 1),
		answered: time.Now()} // until it fails, as of the start
	u.follower = gitsync.NewFollower(repo, remote, func(gitsync.Event) {
		select {
		case u.fetched <- struct{}{}:
		default:
		}
	})
	u.follower.Interval = poll
	u.follower.Timeout = fetchTimeout
	u.follower.Logger = log
	u.follower.OnFetch = u.fetchDone
	return u
}

// run fetches every poll and when triggered, and calls after (in this
// loop, never in the fetch: a writer that fetches holds the writer's
// lock, which after may take) once a fetch moved refs, until ctx ends.
func (u *upstream) run(ctx context.Context, after func(context.Context)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return quiet(gctx, u.follower.Run(gctx)) })
	g.Go(func() error {
		for {
			select {
			case <-gctx.Done():
				return nil
			case <-u.fetched:
				after(gctx)
			}
		}
	})
	return g.Wait()
}

// trigger makes the follower fetch now (several triggers before the
// fetch starts make one fetch).
func (u *upstream) trigger() { u.follower.Trigger() }

// fetch fetches the upstream now and waits for it.
func (u *upstream) fetch(ctx context.Context) error {
	_, err := u.follower.Fetch(ctx)
	return err
}

// firstFetch is the fetch before the first deploy, so that a restart
// serves what the upstream holds; it gives up after at most 30 s (or
// the fetch timeout), and a failure is in status.
func (u *upstream) firstFetch(ctx context.Context) {
	first := 30 * time.Second
	if t := u.follower.Timeout; t > 0 {
		first = min(first, t)
	}
	fctx, cancel := context.WithTimeout(ctx, first)
	defer cancel()
	if err := u.fetch(fctx); err != nil {
		u.log.Warn("first fetch of the upstream failed; serving the mirror", "url", u.remote, "err", err)
	}
}

// pushLive pushes h to the upstream's live with compare-and-swap from
// old (gitsync.Repository.PushCAS), returning live as the upstream says
// it is now.
func (u *upstream) pushLive(ctx context.Context, repo *gitsync.Repository, old, h plumbing.Hash) (plumbing.Hash, error) {
	return repo.PushCAS(ctx, u.remote, gitsync.LiveRef, old, h)
}

// fetchDone records a fetch's outcome (the follower's OnFetch).
func (u *upstream) fetchDone(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err == nil {
		u.fetchErr, u.writeErr = "", ""
		u.answered = time.Now()
	} else {
		u.fetchErr = err.Error()
	}
}

// writeDone records the outcome of a write to the upstream: an error
// that says it did not answer shows in the status at once, without
// waiting for the next fetch to fail.
func (u *upstream) writeDone(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err == nil {
		u.writeErr = ""
		u.answered = time.Now()
	} else {
		u.writeErr = err.Error()
	}
}

// health is what status says of the upstream: the errors of the last
// fetch and write that failed, and how long it has not answered while
// they fail (0 when it answers). A nil upstream (another kind of source)
// is healthy.
func (u *upstream) health() (errs []string, lag time.Duration) {
	if u == nil {
		return nil, 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, e := range []string{u.fetchErr, u.writeErr} {
		if e != "" {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		return nil, 0
	}
	return errs, max(time.Since(u.answered), time.Millisecond)
}

// parseUpstream reads opts.Upstream and opts.UpstreamCredential into a
// gitsync.Remote and leaves in opts the URL without the credential, so
// that nothing kept holds it in a string that prints. A credential in
// the URL is used, with a warning: the URL was given where others read
// it.
func parseUpstream(opts *Options, log *slog.Logger) (gitsync.Remote, error) {
	if opts.Upstream == "" {
		if opts.UpstreamCredential != "" {
			return gitsync.Remote{}, errors.New("an upstream credential without --upstream: give the URL to follow")
		}
		return gitsync.Remote{}, nil
	}
	up, err := gitsync.ParseRemote(opts.Upstream)
	if err != nil {
		return gitsync.Remote{}, fmt.Errorf("--upstream: %w", err)
	}
	opts.Upstream = up.String()
	if up.CredentialInURL() {
		log.Warn(upstreamInURLWarning, "url", up)
	}
	if opts.UpstreamCredential != "" {
		if up, err = up.WithCredential(opts.UpstreamCredential); err != nil {
			return gitsync.Remote{}, fmt.Errorf("the upstream credential: %w", err)
		}
		opts.UpstreamCredential = ""
	}
	return up, nil
}

// upstreamInURLWarning is logged when --upstream's URL holds a user name
// or password.
const upstreamInURLWarning = "the --upstream URL holds a user name or password: it is taken out of the URL and shown nowhere, " +
	"but every local user can read a command line (ps, /proc/PID/cmdline) and it cannot be hidden once given: " +
	"give the URL without it, and the credential (USER:TOKEN or a token) with --upstream-credential-file FILE " +
	"(a file only this user can read) or in $QUIRE_UPSTREAM_TOKEN"
