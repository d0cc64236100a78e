package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
)

// Bounds of a write to an upstream: how many times a write is re-applied
// after the upstream's live moved, and how long it may take in all.
const (
	upstreamAttempts = 30
	upstreamWriteFor = 30 * time.Second
)

// upstreamHead is what a write to an upstream goes on: the upstream's
// live as last fetched, or its main when it has no live yet (the write
// then creates live there, at main).
func (s *source) upstreamHead() (head, lease plumbing.Hash, err error) {
	if h, err := s.repo.Resolve(upstreamLive.String()); err == nil {
		return h, h, nil
	}
	h, err := s.repo.Resolve(upstreamMain.String())
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, fmt.Errorf("the upstream has neither live nor main yet: %w", err)
	}
	return h, plumbing.ZeroHash, nil
}

// commitUpstream commits a write on the upstream's live: the commit goes
// on live as last fetched and is pushed with compare-and-swap; when
// another daemon moved live first, it fetches and re-applies the write as
// an operation (build runs again on the new live: an append appends, an
// If-Match write re-checks its ETag), with backoff. It returns only once
// the upstream accepted the write. Callers hold s.writeMu.
func (wr *writer) commitUpstream(ctx context.Context, s *source, sig object.Signature, user, message string, build func(plumbing.Hash) ([]gitsync.FileWrite, error)) (string, []gitsync.FileWrite, error) {
	ctx, cancel := context.WithTimeout(ctx, upstreamWriteFor)
	defer cancel()
	var last error
	// Pushes with no answer (a connection cut after the pack was sent):
	// each may have landed, with the writes it carried.
	var unknown []plumbing.Hash
	var unknownWrites []gitsync.FileWrite
	for attempt := 0; attempt < upstreamAttempts; attempt++ {
		if attempt > 0 {
			// Backoff with jitter, so that daemons racing for live
			// spread out.
			wait := min(5*time.Millisecond<<min(attempt, 8), 500*time.Millisecond)
			wait = wait/2 + rand.N(wait/2+1)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return "", nil, upstreamUnavailable(s, fmt.Errorf("%w (last: %v)", ctx.Err(), last))
			}
			if _, err := s.follower.Fetch(ctx); err != nil {
				last = err
				continue
			}
			// A push whose answer was lost may have landed: the write is
			// then in live, and re-applying it would write it twice.
			if live, ok := wr.landed(s, unknown); ok {
				return live, unknownWrites, nil
			}
		}
		head, lease, err := s.upstreamHead()
		if err != nil {
			return "", nil, err
		}
		writes, err := build(head)
		if err != nil || len(writes) == 0 {
			return "", nil, err
		}
		h, err := s.repo.CommitOn(ctx, head, gitsync.CommitRequest{Writes: writes,
			Author: sig, User: user, Message: message})
		if err != nil {
			return "", nil, err
		}
		now, err := s.repo.PushCAS(ctx, s.remote, gitsync.LiveRef, lease, h)
		if err == nil && now != h {
			// The upstream (a quire host) merged the write onto a live
			// that had moved: the answer names live as it is now. The
			// mirror goes to the write (what it has the objects of) and
			// fetches the merge in the background.
			if err := s.repo.UpdateRef(upstreamLive, lease, h); err != nil {
				wr.log.Debug("mirror's live moved meanwhile; the next fetch settles it", "err", err)
			}
			s.follower.Trigger()
			if now.IsZero() {
				return wr.mergedLive(ctx, s, h), writes, nil
			}
			return now.String(), writes, nil
		}
		if err == nil {
			// The upstream holds it: the mirror's live follows (a fetch
			// that got there first is fine too).
			if err := s.repo.UpdateRef(upstreamLive, lease, h); err != nil {
				wr.log.Debug("mirror's live moved meanwhile; the next fetch settles it", "err", err)
			}
			return h.String(), writes, nil
		}
		last = err
		var rej *gitsync.PushRejectedError
		if errors.As(err, &rej) && !rej.Stale {
			return "", nil, api.Errorf(api.CodeUpstreamRefused, "%v; nothing was written", err)
		}
		if rej == nil {
			// Not refused: maybe not taken, maybe taken with the answer
			// lost. The next fetch tells.
			unknown = append(unknown, h)
			unknownWrites = writes
		}
		wr.log.Debug("upstream write re-applied", "source", s.id(), "attempt", attempt+1, "err", err)
	}
	if len(unknown) > 0 {
		return "", nil, api.Errorf(api.CodeUpstreamUnavailable,
			"the upstream %s did not answer whether it took the write (%v): it may hold it; read the file before writing it again", s.name, last)
	}
	return "", nil, upstreamUnavailable(s, last)
}

// landed reports whether one of the commits pushed without an answer is
// in the upstream's live as last fetched, and live then.
func (wr *writer) landed(s *source, pushed []plumbing.Hash) (string, bool) {
	if len(pushed) == 0 {
		return "", false
	}
	live, err := s.repo.Resolve(upstreamLive.String())
	if err != nil {
		return "", false
	}
	for _, h := range pushed {
		if ok, err := s.repo.IsAncestor(h.String(), live.String()); err == nil && ok {
			wr.log.Info("a write whose push went unanswered is in the upstream's live", "source", s.id(), "commit", short(h.String()))
			return live.String(), true
		}
	}
	return "", false
}

// mergedLive fetches the upstream's live after it merged the write h
// onto it without saying which commit that made, and returns it, or h
// itself when the fetch fails or does not hold h (the write is accepted
// either way; the next fetch settles the mirror).
func (wr *writer) mergedLive(ctx context.Context, s *source, h plumbing.Hash) string {
	if _, err := s.follower.Fetch(ctx); err != nil {
		wr.log.Debug("fetch after a merged write", "source", s.id(), "err", err)
		return h.String()
	}
	live, err := s.repo.Resolve(upstreamLive.String())
	if err != nil {
		return h.String()
	}
	if ok, err := s.repo.IsAncestor(h.String(), live.String()); err != nil || !ok {
		return h.String()
	}
	return live.String()
}

func upstreamUnavailable(s *source, err error) error {
	return api.Errorf(api.CodeUpstreamUnavailable,
		"the upstream %s did not take the write: %v; nothing was acknowledged, retry", s.name, err)
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
