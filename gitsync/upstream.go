package gitsync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// CommitOn writes req's commit with parent (zero: a root commit) and
// returns it; no ref moves (req.Ref is ignored). The objects are durable
// when it returns. It is the first half of a write to an upstream: the
// commit is then pushed with PushCAS.
func (r *Repository) CommitOn(ctx context.Context, parent plumbing.Hash, req CommitRequest) (plumbing.Hash, error) {
	if len(req.Writes) == 0 {
		return plumbing.ZeroHash, errors.New("commit: no file changes")
	}
	for _, w := range req.Writes {
		if err := checkWritePath(w.Path); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("commit: %w", err)
		}
	}
	if req.Author.Name == "" {
		return plumbing.ZeroHash, errors.New("commit: no author")
	}
	if err := r.writeMu.LockContext(ctx); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit on %s: waiting for the writer lock: %w", parent, err)
	}
	defer r.writeMu.Unlock()
	var h plumbing.Hash
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		var p *pending
		var err error
		h, p, err = buildCommit(st, &r.trees, parent, req)
		if err != nil {
			return err
		}
		return r.st.writePending(p)
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit on %s in %s: %w", parent, r.path, err)
	}
	return h, nil
}

// MergeOn writes the commit that merges from into into (first parent
// into, second from; three-way per file, as the merge policy of the Host
// that opened r says) and
// returns it; no ref moves. It returns zero when into already holds from,
// and a *MergeConflictError when the merge conflicts.
func (r *Repository) MergeOn(ctx context.Context, from, into plumbing.Hash) (plumbing.Hash, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	var out plumbing.Hash
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		var p *pending
		var err error
		out, p, err = mergeInto(ctx, st, r.merge, from, into)
		if err != nil || p == nil {
			return err
		}
		return r.st.writePending(p)
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge %s into %s in %s: %w", from, into, r.path, err)
	}
	return out, nil
}

// mergeInto computes the merge of from into into in a pending store (nil
// and zero when into already holds from).
func mergeInto(ctx context.Context, st storer.EncodedObjectStorer, policy MergePolicy, from, into plumbing.Hash) (plumbing.Hash, *pending, error) {
	if in, err := isAncestor(st, from, into); err != nil || in {
		return plumbing.ZeroHash, nil, err
	}
	base, err := mergeBase(st, into, from)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	p := newPending(st)
	res, err := mergeTrees(ctx, p, policy, base, into, from)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if len(res.Conflicts) > 0 {
		return plumbing.ZeroHash, nil, &MergeConflictError{Conflicts: res.Conflicts}
	}
	m, err := mergeCommit(p, res.Tree, into, from, MainRef.Short(), LiveRef.Short())
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return m, p, nil
}

// UpdateRef moves name from old to new with compare-and-swap (ErrStale
// when it is not at old), durably, under the writer lock.
func (r *Repository) UpdateRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	err := r.locked(func(storer.EncodedObjectStorer) error { return r.setRef(name, old, new) })
	if err != nil {
		return fmt.Errorf("update %s in %s: %w", name, r.path, err)
	}
	return nil
}

// PushRejectedError is a push the remote refused. Stale says the ref had
// moved (compare-and-swap failed, or not a fast-forward): fetch, re-apply
// the write, push again. Otherwise the remote refused the content.
type PushRejectedError struct {
	Ref    plumbing.ReferenceName
	Reason string
	Stale  bool
}

func (e *PushRejectedError) Error() string {
	return fmt.Sprintf("the upstream refused %s: %s", e.Ref.Short(), e.Reason)
}

// Is makes a stale rejection match ErrStale.
func (e *PushRejectedError) Is(target error) bool { return e.Stale && target == ErrStale }

// PushCAS pushes commit new to ref of remote only if the remote's
// ref is still old (zero: must not exist): compare-and-swap on the
// server (git push --force-with-lease). It returns nil once the remote
// accepted, a *PushRejectedError when it refused, another error when it
// could not be reached. now is what the remote's ref holds once it
// accepted: new, or, when a quire host merged new onto a live that had
// moved (see below), that merge (zero when the host did not say which).
//
// A write on live to a quire host with two branches (one that advertises
// the quire-live capability) goes without the lease: such a host decides
// under its writer lock whether a daemon's write made on an older live
// merges onto the live it has (files its merge policy combines, files
// only the write changed) or is refused as non-fast-forward. The lease, checked
// by the git client against the ref advertisement, would otherwise fail
// every time another writer moved live between this daemon's fetch and
// its push: on a busy host that is nearly every time.
//
// Such a push goes from this process over smart HTTP when it can (see
// sendLive), with git push otherwise. A push that was sent and got no
// report back is an error matching ErrPushOutcomeUnknown.
//
// The credential of remote goes to the remote alone; no error carries it.
func (r *Repository) PushCAS(ctx context.Context, remote Remote, ref plumbing.ReferenceName, old, new plumbing.Hash) (now plumbing.Hash, err error) {
	now, err = r.pushCAS(ctx, remote, ref, old, new)
	return now, remote.scrubErr(err)
}

func (r *Repository) pushCAS(ctx context.Context, remote Remote, ref plumbing.ReferenceName, old, new plumbing.Hash) (now plumbing.Hash, err error) {
	live := ref == LiveRef && !old.IsZero() && r.decidesLive(ctx, remote)
	if live && !r.sp.gitOnly.Load() {
		now, err := r.sendLive(ctx, r.helperRemote(remote), new)
		if !errors.Is(err, errUseCLI) {
			r.sp.native.Add(1)
			return now, err
		}
		r.sp.fellBack(err)
		// sendLive forgets a host that stopped deciding live.
		live = r.decidesLive(ctx, remote)
	}
	if err := ctx.Err(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("push %s to %s: %w: %w", ref.Short(), remote, ErrPushNotSent, err)
	}
	return r.pushCLI(ctx, remote, ref, old, new, live)
}

// pushCLI is pushCAS with git push: forced when the host decides live,
// with a lease on old otherwise.
func (r *Repository) pushCLI(ctx context.Context, remote Remote, ref plumbing.ReferenceName, old, new plumbing.Hash, live bool) (now plumbing.Hash, err error) {
	r.sp.cli.Add(1)
	out, stderr, err := gitRun(ctx, r, remote, pushArgs(remote, ref, old, new, live)...)
	merged, rejected := porcelainOutcome(out, ref)
	if rejected != nil {
		return plumbing.ZeroHash, rejected
	}
	if err != nil && notSent(stderr) {
		return plumbing.ZeroHash, fmt.Errorf("push %s to %s: %w: %w", ref.Short(), remote, ErrPushNotSent, err)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("push %s to %s: %w", ref.Short(), remote, err)
	}
	now = new
	if m := mergedInto(stderr); live && !m.IsZero() {
		// The host merged the write onto a live that had moved: also
		// when git saw a fast-forward (live moved after git's look).
		now = m
	} else if merged {
		now = plumbing.ZeroHash // merged, but the host did not say into what
	}
	if live {
		r.sp.remember(remote.target(), new, now)
	}
	return now, nil
}

// pushArgs are git push's arguments for pushCLI.
func pushArgs(remote Remote, ref plumbing.ReferenceName, old, new plumbing.Hash, live bool) []string {
	args := []string{"push", "--porcelain", "--no-verify"}
	if live {
		args = append(args, "--force")
	} else {
		lease := "--force-with-lease=" + ref.String() + ":"
		if !old.IsZero() {
			lease += old.String()
		}
		args = append(args, lease)
	}
	return append(args, "--", remote.target(), new.String()+":"+ref.String())
}

// porcelainOutcome reads git push --porcelain's output for ref: whether
// it was a forced update (merged), or its rejection.
func porcelainOutcome(out string, ref plumbing.ReferenceName) (merged bool, rejected error) {
	for _, line := range strings.Split(out, "\n") {
		// "<flag>\t<from>:<to>\t<summary> (<reason>)"
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 {
			continue
		}
		if f[0] == "+" {
			// A forced update: new did not descend from what the remote
			// had, and a host that decides live merged it.
			merged = true
		}
		if f[0] != "!" {
			continue
		}
		return merged, &PushRejectedError{Ref: ref, Reason: f[2], Stale: staleReason(f[2])}
	}
	return merged, nil
}

// notSent reports whether git push's messages say it never reached the
// remote's receive-pack: no connection, or a client error (4xx) on the
// way there. Anything else may have been applied.
func notSent(stderr string) bool {
	for _, s := range []string{"Could not resolve host", "Failed to connect to", "Connection refused",
		"Couldn't connect to server", "The requested URL returned error: 4", "Authentication failed"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// liveIsNow introduces, in a host's remote: message, the commit live is
// after it merged a pushed write onto it.
const liveIsNow = "live is now"

// mergedInto finds the commit a host's remote: message says live is now
// (zero when there is none).
func mergedInto(stderr string) plumbing.Hash {
	i := strings.LastIndex(stderr, liveIsNow+" ")
	if i < 0 {
		return plumbing.ZeroHash
	}
	rest := stderr[i+len(liveIsNow)+1:]
	if len(rest) < 40 {
		return plumbing.ZeroHash
	}
	h, ok := parseHash(rest[:40])
	if !ok {
		return plumbing.ZeroHash
	}
	return h
}

// decidesLive reports whether remote is a quire host with two branches:
// its receive-pack advertisement carries the quire-live capability. Only
// HTTP(S) remotes are asked (with remote's credential); a definite answer
// is remembered per URL, an unreachable or refusing remote counts as a
// plain one this time and is asked again later.
func (r *Repository) decidesLive(ctx context.Context, remote Remote) bool {
	key := remote.target()
	if v, ok := r.liveHosts.Load(key); ok {
		return v.(bool)
	}
	client, base, auth, ok := httpRemote(r.helperRemote(remote), "git/quire")
	if !ok {
		r.liveHosts.Store(key, false)
		return false
	}
	adv, err := fetchAdvertisement(ctx, client, base, auth)
	if errors.Is(err, errUnauthorized) && !remote.HasCredential() {
		// Ask git's credential helpers, as git push would.
		r.sp.helperCreds.Delete(key)
		if filled, ok := r.fillCredential(ctx, remote); ok {
			r.sp.helperCreds.Store(key, filled)
			client, base, auth, _ = httpRemote(filled, "git/quire")
			adv, err = fetchAdvertisement(ctx, client, base, auth)
		}
	}
	if err != nil {
		return false
	}
	r.liveHosts.Store(key, adv.caps.has(liveCap))
	return adv.caps.has(liveCap)
}

// IsAncestor reports whether commit a is b or an ancestor of b (both hex
// hashes). An error matching plumbing.ErrObjectNotFound says this
// repository does not have one of them (yet).
func (r *Repository) IsAncestor(a, b string) (bool, error) {
	ha, oka := parseHash(a)
	hb, okb := parseHash(b)
	if !oka || !okb {
		return false, fmt.Errorf("not commit hashes: %q, %q: %w", a, b, plumbing.ErrObjectNotFound)
	}
	var out bool
	err := r.locked(func(st storer.EncodedObjectStorer) error {
		var err error
		out, err = isAncestor(st, ha, hb)
		return err
	})
	return out, err
}
