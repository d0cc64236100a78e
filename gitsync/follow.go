package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Follower keeps a repository up to date with an upstream remote: it
// fetches on an interval and on demand (Trigger), always the full history,
// and reports the refs that moved as SourceUpstream events. Fetches run
// the git CLI with a timeout and hold only the writer lock: reads of the
// repository go on while the network is slow.
type Follower struct {
	// Repository receives the fetched objects and refs.
	Repository *Repository
	// Remote is the upstream (its URL prints without a credential).
	Remote Remote
	// RefSpecs say what to fetch where; default
	// "+refs/heads/*:refs/remotes/upstream/*".
	RefSpecs []string
	// Interval between fetches; default 5 minutes.
	Interval time.Duration
	// OnEvent receives one event per fetch that moved refs.
	OnEvent func(Event)
	// Logger receives fetch failures; nil discards.
	Logger *slog.Logger
	// Timeout bounds one fetch (default 1 minute): a hung upstream is an
	// error, not a stuck follower.
	Timeout time.Duration
	// OnFetch, when set, receives every fetch's outcome (nil: it
	// worked), so that a stuck upstream can be reported.
	OnFetch func(error)

	trigger chan struct{}
}

// NewFollower follows remote into r, reporting moves to onEvent.
func NewFollower(r *Repository, remote Remote, onEvent func(Event)) *Follower {
	return &Follower{Repository: r, Remote: remote, OnEvent: onEvent, trigger: make(chan struct{}, 1)}
}

// Trigger asks a running follower to fetch now. It never blocks; several
// triggers before the fetch starts make one fetch.
func (f *Follower) Trigger() {
	select {
	case f.trigger <- struct{}{}:
	default:
	}
}

// Run fetches at once, then on every interval and trigger, until ctx is
// done. Fetch failures are logged and retried at the next tick.
func (f *Follower) Run(ctx context.Context) error {
	interval := f.Interval
	if interval <= 0 {
		interval = 5 * time.Minute
	}
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := f.Fetch(ctx); err != nil && ctx.Err() == nil {
			log.Warn("fetch upstream", "url", f.Remote, "repo", f.Repository.Path(), "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-f.trigger:
		}
	}
}

// Fetch fetches from the upstream once and returns the refs that moved
// (also sent to OnEvent when any did).
//
// git fetches into a staging namespace (refs/quire-fetch/…) without any
// of the repository's locks, so the daemon's own commits and ref moves
// go on while the network is slow; then, under the writer lock, each
// fetched value moves its ref only if the ref is still what it was when
// the fetch began. A ref the daemon moved meanwhile (its own write,
// pushed and accepted: newer than what the fetch saw) keeps its value;
// the next fetch settles it.
func (f *Follower) Fetch(ctx context.Context) ([]RefUpdate, error) {
	refSpecs, stagedSpecs, staged, err := f.fetchSpecs()
	if err != nil {
		return nil, err
	}
	r := f.Repository
	// One fetch at a time; the storage lock (readers) and the writer
	// lock are only taken to read and move refs, never across the
	// network.
	// Waiting for a fetch in progress counts against ctx (a write's
	// deadline).
	if err := r.fetchMu.LockContext(ctx); err != nil {
		return nil, fmt.Errorf("fetch %s into %s: waiting for the fetch in progress: %w", f.Remote, r.path, err)
	}
	defer r.fetchMu.Unlock()
	var before map[plumbing.ReferenceName]plumbing.Hash
	err = r.locked(func(storer.EncodedObjectStorer) error {
		var err error
		before, err = refsMatching(r, refSpecs)
		return err
	})
	if err == nil {
		err = f.gitFetch(ctx, staged)
	}
	var updates []RefUpdate
	if err == nil {
		updates, err = f.adopt(refSpecs, stagedSpecs, before)
	}
	updates, err = f.checkFetched(ctx, updates, err)
	if f.OnFetch != nil {
		f.OnFetch(err)
	}
	if err != nil {
		return nil, f.Remote.scrubErr(fmt.Errorf("fetch %s into %s: %w", f.Remote, r.path, err))
	}
	f.repackIfDue(ctx)
	slices.SortFunc(updates, func(a, b RefUpdate) int { return strings.Compare(string(a.Name), string(b.Name)) })
	if len(updates) > 0 && f.OnEvent != nil {
		f.OnEvent(Event{Source: SourceUpstream, Name: r.path, Repository: r, Refs: updates})
	}
	return updates, nil
}

// fetchSpecs are the follower's refspecs (all branches by default), the
// same with their destinations in the staging namespace, and those as
// strings for git fetch.
func (f *Follower) fetchSpecs() (refSpecs, stagedSpecs []config.RefSpec, staged []string, err error) {
	specs := f.RefSpecs
	if len(specs) == 0 {
		specs = []string{"+refs/heads/*:refs/remotes/upstream/*"}
	}
	for _, s := range specs {
		rs := config.RefSpec(s)
		if err := rs.Validate(); err != nil {
			return nil, nil, nil, fmt.Errorf("refspec %q: %w", s, err)
		}
		refSpecs = append(refSpecs, rs)
		st := stagedSpec(s)
		stagedSpecs = append(stagedSpecs, config.RefSpec(st))
		staged = append(staged, st)
	}
	return refSpecs, stagedSpecs, staged, nil
}

// repackIfDue rolls up the packs fetches wrote once there are
// PacksPerRepack of them.
func (f *Follower) repackIfDue(ctx context.Context) {
	r := f.Repository
	if _, bounded := ctx.Deadline(); !bounded && r.PacksWritten() >= PacksPerRepack {
		// Each fetch is one pack; roll them up (no locks held). Not in
		// a fetch with a deadline (a write's, after its push was
		// refused): the next fetch of Run's does it.
		if err := r.RepackContext(ctx); err != nil && f.Logger != nil {
			f.Logger.Warn("repack", "repo", r.path, "err", err)
		}
	}
}

// stagingPrefix is where a fetch puts what it fetched before the refs
// adopt it.
const stagingPrefix = "refs/quire-fetch/"

// stagedSpec is refspec s with its destination in the staging namespace.
func stagedSpec(s string) string {
	src, dst, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	return src + ":" + stagedName(dst)
}

func stagedName(name string) string { return stagingPrefix + strings.TrimPrefix(name, "refs/") }

// adopt moves each ref to the value the fetch staged for it, under the
// writer lock, if the ref is still what it was before the fetch (before);
// a ref the fetch staged no value for that has gone upstream is left as
// it is (fetches do not prune). It returns the moves.
func (f *Follower) adopt(refSpecs, stagedSpecs []config.RefSpec, before map[plumbing.ReferenceName]plumbing.Hash) ([]RefUpdate, error) {
	r := f.Repository
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	var updates []RefUpdate
	err := r.locked(func(storer.EncodedObjectStorer) error {
		r.reindex() // git wrote new packs
		got, err := refsMatching(r, stagedSpecs)
		if err != nil {
			return err
		}
		for sname, h := range got {
			name := plumbing.ReferenceName("refs/" + strings.TrimPrefix(string(sname), stagingPrefix))
			if !matchesAny(refSpecs, name) {
				continue
			}
			cur, err := r.refValue(name)
			if err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
				return err
			}
			if cur == h {
				continue
			}
			if cur != before[name] {
				// The daemon moved it while the fetch ran.
				continue
			}
			if err := r.setRef(name, cur, h); err != nil {
				if errors.Is(err, ErrStale) {
					continue
				}
				return err
			}
			updates = append(updates, RefUpdate{Name: name, Old: cur, New: h})
		}
		return nil
	})
	return updates, err
}

// matchesAny reports whether name is a destination of one of specs.
func matchesAny(specs []config.RefSpec, name plumbing.ReferenceName) bool {
	for _, s := range specs {
		if dstMatches(s, name) {
			return true
		}
	}
	return false
}

// refsMatching reads the refs that are destinations of specs. Callers
// hold r.mu.
func refsMatching(r *Repository, specs []config.RefSpec) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	iter, err := r.repo.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		for _, s := range specs {
			if dstMatches(s, ref.Name()) {
				out[ref.Name()] = ref.Hash()
			}
		}
		return nil
	})
	return out, err
}

// dstMatches reports whether name is a destination of refspec s.
func dstMatches(s config.RefSpec, name plumbing.ReferenceName) bool {
	spec := strings.TrimPrefix(string(s), "+")
	_, dst, ok := strings.Cut(spec, ":")
	if !ok {
		return false
	}
	if pre, post, wild := strings.Cut(dst, "*"); wild {
		n := string(name)
		return strings.HasPrefix(n, pre) && strings.HasSuffix(n, post) && len(n) > len(pre)+len(post)
	}
	return string(name) == dst
}

// gitFetch runs git fetch into the repository: packs are kept as packs
// (never unpacked to loose objects) and synced, refs move by lock file.
func (f *Follower) gitFetch(ctx context.Context, specs []string) error {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", f.Remote.target()}, specs...)
	if _, _, err := gitRun(ctx, f.Repository, f.Remote, args...); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		return err
	}
	return nil
}

// gitRun runs the git CLI in r (durable settings: packs kept, objects
// and refs synced), talking to remote (zero: none) with its credential,
// and returns its standard output and standard error (both bounded, and
// scrubbed of the credential); the error says what git said when it
// failed.
func gitRun(ctx context.Context, r *Repository, remote Remote, args ...string) (string, string, error) {
	base := []string{"-c", "fetch.unpackLimit=1", "-c", "transfer.unpackLimit=1", "-c", "receive.unpackLimit=1",
		"-c", "core.fsync=objects,reference", "-c", "core.fsyncMethod=fsync", "-c", "gc.auto=0", "-c", "credential.interactive=never"}
	authArgs, authEnv := remote.gitAuth()
	base = append(base, authArgs...)
	cmd := exec.CommandContext(ctx, "git", append(base, args...)...)
	killGroupOnCancel(cmd)
	cmd.Dir = r.st.refs.commonDir
	// Nothing prompts for a credential: no terminal, no askpass program.
	cmd.Env = append(gitEnv("GIT_DIR="+r.st.refs.commonDir, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS="), authEnv...)
	cmd.WaitDelay = 5 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout = &limitedBuffer{b: &out, n: 64 << 10}
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 8 << 10}
	err := cmd.Run()
	stdout, errText := remote.scrub(out.String()), remote.scrub(stderr.String())
	if err != nil {
		msg := strings.TrimSpace(errText)
		if i := strings.LastIndex(msg, "fatal: "); i >= 0 {
			msg = msg[i+len("fatal: "):]
		}
		if msg == "" {
			msg = err.Error()
		}
		return stdout, errText, fmt.Errorf("git %s: %s", args[0], oneLine(msg))
	}
	return stdout, errText, nil
}
