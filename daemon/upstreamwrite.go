package daemon

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
)

// Bounds of a write to an upstream: how many times a write is re-applied
// after the upstream's live moved, and how long it may take in all when
// it has no deadline of its own (an API write's is Options.WriteTimeout
// from its arrival).
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

// commitUpstream commits batch's writes on the upstream's live and
// returns the commit: the commit goes on live as last fetched and is
// pushed with compare-and-swap; when another daemon moved live first, it
// fetches and re-applies the writes as operations (each build runs again
// on the new live: an append appends, an If-Match write re-checks its
// ETag), with backoff, until ctx's deadline. It returns only once the
// upstream accepted the writes ("" when none was left to write). A push
// that went unanswered may have landed: the writes' keys (every write to
// an upstream has one) tell after a fetch, and a second copy is refused
// (by a quire host for its keys, by any other for its lease); until then
// the writes' outcome is unknown. Callers hold the writer's lock (writeState.lock).
func (wr *writer) commitUpstream(ctx context.Context, s *source, batch []*writeReq) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, upstreamWriteFor)
		defer cancel()
	}
	var last error
	unanswered := false // a push went unanswered: its writes may be in the upstream
	for attempt := 0; attempt < upstreamAttempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return "", wr.upstreamFailed(s, unanswered, fmt.Errorf("%w (last: %v)", err, last))
			}
			if err := s.up.fetch(ctx); err != nil {
				last = err
				if ctx.Err() != nil {
					return "", wr.upstreamFailed(s, unanswered, err)
				}
				continue
			}
		}
		head, lease, writes, err := wr.upstreamWrites(s, batch)
		if err != nil {
			return "", err
		}
		if len(writes) == 0 {
			return "", nil
		}
		sig, user, msg := batchMessage(batch, wr.now())
		h, err := s.repo.CommitOn(ctx, head, gitsync.CommitRequest{Writes: writes,
			Author: sig, User: user, Message: msg, Keys: batchKeys(batch)})
		if err != nil {
			if ctx.Err() != nil {
				return "", wr.upstreamFailed(s, unanswered, err)
			}
			return "", err
		}
		now, err := s.up.pushLive(ctx, s.repo, lease, h)
		if err == nil {
			s.up.writeDone(nil)
			return wr.pushed(ctx, s, lease, h, now), nil
		}
		last = err
		if err := wr.pushFailed(ctx, s, batch, err, &unanswered); err != nil {
			return "", err
		}
		wr.log.Debug("upstream write re-applied", "source", s.id(), "attempt", attempt+1, "err", err)
	}
	return "", wr.upstreamFailed(s, unanswered, last)
}

// backoff waits before attempt (from 1) of an upstream write, or until
// ctx is done (its error).
func backoff(ctx context.Context, attempt int) error {
	// Backoff with jitter, so that daemons racing for live spread out.
	wait := min(5*time.Millisecond<<min(attempt, 8), 500*time.Millisecond)
	wait = wait/2 + rand.N(wait/2+1)
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// upstreamWrites applies batch's writes to the upstream's live as last
// fetched (or its main: see upstreamHead): the commit to write on and
// the lease to push it with, and the writes (none when none is left to
// write).
func (wr *writer) upstreamWrites(s *source, batch []*writeReq) (head, lease plumbing.Hash, writes []gitsync.FileWrite, err error) {
	head, lease, err = s.upstreamHead()
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, nil, err
	}
	snap, err := s.repo.SnapshotOf(head)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, nil, err
	}
	// A write whose key live holds (a push that went unanswered
	// landed, or a retry of a write another daemon took) is
	// answered with that commit instead.
	return head, lease, applyBatch(snap, batch, wr.knownKeys(s, head)), nil
}

// pushFailed settles batch after the push of its commit failed with err:
// the error ending the write, or nil to re-apply it after a fetch.
// *unanswered becomes true once a push may have landed.
func (wr *writer) pushFailed(ctx context.Context, s *source, batch []*writeReq, err error, unanswered *bool) error {
	var rej *gitsync.PushRejectedError
	switch {
	case errors.As(err, &rej) && !rej.Stale && !*unanswered:
		return api.Errorf(api.CodeUpstreamRefused, "%v; nothing was written", err)
	case rej == nil && !errors.Is(err, gitsync.ErrPushNotSent):
		// Not refused: maybe not taken, maybe taken with the answer
		// lost. The writes' keys tell after the next fetch.
		*unanswered = true
		for _, r := range batch {
			if r.err == nil && len(r.writes) > 0 {
				r.maybeSent = true
			}
		}
	}
	if ctx.Err() != nil || rej != nil && !rej.Stale {
		return wr.upstreamFailed(s, *unanswered, err)
	}
	// Certainly not applied (unless an earlier push went
	// unanswered): a caller whose deadline passes meanwhile is told
	// nothing was written.
	for _, r := range batch {
		r.unclaim()
	}
	return nil
}

// pushed settles the mirror after the upstream took commit h pushed on
// lease, and returns the commit that answers the write: live as the
// upstream says it is now.
func (wr *writer) pushed(ctx context.Context, s *source, lease, h, now plumbing.Hash) string {
	// The mirror's live goes to the write (what it has the objects of; a
	// fetch that got there first is fine too).
	if err := s.repo.UpdateRef(upstreamLive, lease, h); err != nil {
		// A fetch moved the mirror's live meanwhile, to a commit that
		// may not hold the write yet: fetch again now, so that what is
		// deployed next holds the acknowledged write (the upstream's
		// live holds it).
		wr.log.Debug("mirror's live moved meanwhile; fetching", "err", err)
		if err := s.up.fetch(ctx); err != nil {
			wr.log.Debug("fetch after an acknowledged write", "source", s.id(), "err", err)
		}
	}
	if now == h {
		return h.String()
	}
	// The upstream (a quire host) merged the write onto a live that had
	// moved: the answer names live as it is now, fetched in the
	// background.
	s.up.trigger()
	if now.IsZero() {
		return wr.mergedLive(ctx, s, h)
	}
	return now.String()
}

// upstreamFailed is the answer of writes the upstream did not take, and
// says so in the status: outcome_unknown once a push of them went
// unanswered (they may be there), upstream_unavailable otherwise
// (nothing was written).
func (wr *writer) upstreamFailed(s *source, unanswered bool, err error) error {
	var out error
	if unanswered {
		out = wr.outcomeUnknown(s, err)
	} else {
		out = upstreamUnavailable(s, err)
	}
	s.up.writeDone(out)
	return out
}

// mergedLive fetches the upstream's live after it merged the write h
// onto it without saying which commit that made, and returns it, or h
// itself when the fetch fails or does not hold h (the write is accepted
// either way; the next fetch settles the mirror).
func (wr *writer) mergedLive(ctx context.Context, s *source, h plumbing.Hash) string {
	if err := s.up.fetch(ctx); err != nil {
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
		"the upstream %s did not take the write: %v; nothing was written, retry", s.name, err)
}

// afterFetch deploys what a fetch brought and, when the upstream's main
// moved past its live, merges main into live there (whichever daemon
// sees it first; the compare-and-swap decides, the others adopt it).
func (wr *writer) afterFetch(ctx context.Context, s *source) {
	if err := wr.mergeUpstreamMain(ctx, s); err != nil {
		wr.log.Warn("merging the upstream's main into live failed", "source", s.id(), "err", err)
		s.deploys.setError(err)
	}
	if _, err := wr.deployer.deploy(ctx, s); err != nil {
		wr.log.Warn("deploy after fetch failed", "source", s.id(), "err", err)
	}
}

// mergeUpstreamMain merges the upstream's main into its live, when main
// moved past it, and pushes the merge: a commit of the daemon's, under
// the writer's lock.
func (wr *writer) mergeUpstreamMain(ctx context.Context, s *source) error {
	s.writes.lock.Lock()
	defer s.writes.lock.Unlock()
	main, err := s.repo.Resolve(upstreamMain.String())
	if err != nil {
		return nil // no main: nothing to merge
	}
	live, err := s.repo.Resolve(upstreamLive.String())
	if err != nil {
		return nil // no live yet: the first write creates it at main
	}
	m, err := s.repo.MergeOn(ctx, main, live)
	if err != nil || m.IsZero() {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, upstreamWriteFor)
	defer cancel()
	if _, err := s.up.pushLive(pctx, s.repo, live, m); err != nil {
		if errors.Is(err, gitsync.ErrStale) {
			s.up.trigger() // another daemon merged or wrote first
			return nil
		}
		return err
	}
	if err := s.repo.UpdateRef(upstreamLive, live, m); err != nil {
		s.up.trigger()
	}
	wr.log.Info("merged the upstream's main into live", "source", s.id(), "live", short(m.String()))
	return nil
}
